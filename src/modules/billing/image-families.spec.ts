import {
  ALL_IMAGE_FAMILIES,
  anthropicImageTokens,
  geminiImageTokens,
  imageFamiliesOf,
  imageFamilyOf,
  maxImageTokens,
  patchImageTokens,
  tiledImageTokens,
} from 'src/modules/billing/image-families';

const GPT_4O = { base: 85, tile: 170 };
const GPT_4O_MINI = { base: 2833, tile: 5667 };

describe(tiledImageTokens.name, () => {
  it.each([
    [1024, 1024, 765],
    [2048, 4096, 1105],
    [512, 512, 255],
    [4096, 8192, 1105],
    [100, 20_000, 765],
    [1, 1, 255],
  ])('should price %i×%i at gpt-4o’s %i tokens', (width, height, tokens) => {
    expect(tiledImageTokens({ width, height }, false, GPT_4O)).toBe(tokens);
  });

  it('should price gpt-4o-mini’s base and tiles, even at low detail', () => {
    expect(tiledImageTokens({ width: 1, height: 1 }, true, GPT_4O_MINI)).toBe(2833);
    expect(tiledImageTokens({ width: 1024, height: 1024 }, false, GPT_4O_MINI)).toBe(2833 + 4 * 5667);
  });

  it('should price an unknown size at 8 tiles, and never above', () => {
    expect(tiledImageTokens(null, false, GPT_4O)).toBe(1445);
    expect(tiledImageTokens({ width: 2 ** 32 - 1, height: 3 }, false, GPT_4O)).toBeLessThanOrEqual(1445);
  });
});

describe(patchImageTokens.name, () => {
  it('should count 32-px patches times the multiplier, capped at 1536 patches', () => {
    // OpenAI's example: 1024×1024 is 1024 patches.
    expect(patchImageTokens({ width: 1024, height: 1024 }, 1.62)).toBe(Math.ceil(1024 * 1.62));
    expect(patchImageTokens({ width: 1800, height: 2400 }, 2.46)).toBe(Math.ceil(1536 * 2.46));
    expect(patchImageTokens({ width: 1, height: 1 }, 1.72)).toBe(2);
    expect(patchImageTokens(null, 2.46)).toBe(Math.ceil(1536 * 2.46));
  });
});

describe(anthropicImageTokens.name, () => {
  it('should price width×height/750 after scaling, at most about 1,600', () => {
    // Anthropic's table: 200×200 ≈ 54 tokens, 1000×1000 ≈ 1334.
    expect(anthropicImageTokens({ width: 200, height: 200 })).toBe(54);
    expect(anthropicImageTokens({ width: 1000, height: 1000 })).toBe(1334);
    expect(anthropicImageTokens({ width: 8000, height: 8000 })).toBe(1600);
    expect(anthropicImageTokens(null)).toBe(1600);
  });
});

describe(geminiImageTokens.name, () => {
  it('should price 258 per 768-px tile, 258 for a small image', () => {
    expect(geminiImageTokens({ width: 384, height: 384 })).toBe(258);
    expect(geminiImageTokens({ width: 1000, height: 700 })).toBe(2 * 258);
    expect(geminiImageTokens({ width: 20_000, height: 20_000 })).toBe(16 * 258);
    expect(geminiImageTokens(null)).toBe(16 * 258);
  });
});

describe(imageFamiliesOf.name, () => {
  const route = (type: 'openai' | 'anthropic' | 'gemini', upstreamModel: string) => ({
    channel: { type },
    upstreamModel,
  });

  it.each([
    ['openai', 'gpt-4o', 'gpt-4o'],
    ['openai', 'gpt-4o-2024-08-06', 'gpt-4o'],
    ['openai', 'gpt-4o-mini', 'gpt-4o-mini'],
    ['openai', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['openai', 'gpt-4.1-nano', 'gpt-4.1-nano'],
    ['openai', 'o4-mini', 'o4-mini'],
    ['anthropic', 'claude-sonnet-4-5', 'anthropic'],
    ['gemini', 'gemini-2.5-flash', 'gemini'],
    ['openai', 'gpt-4o-audio-preview', null],
    ['openai', 'claude-sonnet-4-5', null],
    ['gemini', 'gemini-3-pro-preview', null],
  ] as const)('should know %s %s as %s', (type, upstreamModel, family) => {
    expect(imageFamilyOf(type, upstreamModel)).toBe(family);
  });

  it('should take every route, and every formula when one route is unknown', () => {
    expect(imageFamiliesOf([route('openai', 'gpt-4o'), route('openai', 'gpt-4o-mini')])).toEqual([
      'gpt-4o',
      'gpt-4o-mini',
    ]);
    expect(imageFamiliesOf([route('openai', 'gpt-4o'), route('openai', 'mock-gpt')])).toBe(ALL_IMAGE_FAMILIES);
  });
});

describe(maxImageTokens.name, () => {
  it('should never hold an image below any known formula', () => {
    for (const size of [null, { width: 1, height: 1 }, { width: 1024, height: 1024 }, { width: 4000, height: 300 }]) {
      for (const low of [false, true]) {
        const worst = maxImageTokens(ALL_IMAGE_FAMILIES, size, low);
        for (const family of ALL_IMAGE_FAMILIES) {
          expect(worst).toBeGreaterThanOrEqual(maxImageTokens([family], size, low));
        }
      }
    }
    expect(maxImageTokens(['gpt-4o', 'gpt-4o-mini'], { width: 1, height: 1 }, true)).toBe(2833);
  });
});
