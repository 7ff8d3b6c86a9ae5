import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import {
  countCompletionTokens,
  estimateEmbeddingTokens,
  estimatePromptTokens,
  estimateRequest,
  estimateRequestTokens,
} from 'src/modules/billing/token-estimator';
import { SeededRandom } from 'test/support/seeded-random';
import { cpuMillisecondsOf } from 'test/support/cpu-time';

// Images priced as gpt-4o does: OpenAI's published examples below.
const options = { audioReferenceTokens: 4096, imageFamilies: ['gpt-4o' as const] };
const WORST_GPT_4O_IMAGE = 85 + 170 * 8;
const plain = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
const estimate = (body: Record<string, unknown>) => estimateRequestTokens(body, options);
const base = { model: 'm', messages: [{ role: 'user', content: 'Hi' }] };
const withPart = (part: unknown) => estimate({ model: 'm', messages: [{ role: 'user', content: [part] }] });

/** A JSON value like a tool schema, from one seed: words, CJK, emoji, code, nesting. */
function randomSchema(random: SeededRandom, depth = 0): unknown {
  const text = () =>
    random.pick([
      () => 'The city and state, e.g. San Francisco, CA',
      () => random.chars(random.int(1, 60), 0x4e00, 0x9fff),
      () => random.chars(random.int(1, 20), 0x1f600, 0x1f64f),
      () => 'if (x) {\n\treturn "quoted";\n}',
      () => 'a'.repeat(random.int(1, 500)),
      () => String(random.int(0, 1e9)),
    ])();
  if (depth > 3 || random.next() < 0.3) {
    return random.pick([text(), random.int(-5, 5), true, null]);
  }
  const entries = Array.from({ length: random.int(1, 6) }, () => [text(), randomSchema(random, depth + 1)]);
  return random.next() < 0.3 ? entries.map(([, value]) => value) : Object.fromEntries(entries);
}

describe(estimateRequestTokens.name, () => {
  it('should estimate a prompt at or above its real token count', () => {
    const text = 'Hello, how are you doing today? Please tell me a story about dragons.';
    const estimated = estimatePromptTokens([{ role: 'user', content: text }]);
    expect(estimated).toBeGreaterThanOrEqual(countCompletionTokens(text) + 7);
    expect(estimated).toBeLessThan(40);
  });

  it('should hold tools, functions, response_format and tool calls at least at their JSON text', () => {
    const random = new SeededRandom(424242);
    const below: string[] = [];
    for (let round = 0; round < 200; round++) {
      const schema = randomSchema(random);
      const field = random.pick(['tools', 'functions', 'response_format', 'tool_choice', 'prediction', 'documents']);
      const extra = estimate({ ...base, [field]: schema }) - estimate(base);
      const asToolCall = estimate({
        ...base,
        messages: [{ role: 'assistant', content: null, tool_calls: [{ function: { arguments: schema } }] }],
      });
      const json = plain(JSON.stringify(schema));
      if (extra < json || asToolCall < json) {
        below.push(`${field}: ${extra}/${asToolCall} < ${json} for ${JSON.stringify(schema).slice(0, 80)}`);
      }
    }
    expect(below).toEqual([]);
  });

  it('should count every message field, and sampling parameters not at all', () => {
    const bare = estimate(base);
    const long = 'word '.repeat(200);
    for (const field of ['name', 'refusal', 'function_call', 'reasoning_content']) {
      expect(estimate({ ...base, messages: [{ role: 'assistant', content: 'x', [field]: long }] })).toBeGreaterThan(
        bare + 200,
      );
    }
    expect(estimate({ ...base, temperature: 1, max_tokens: 5, stream: true, n: 2, seed: 1 })).toBe(bare);
  });

  it('should hold an earlier audio answer referenced by id at the output cap', () => {
    const referenced = estimate({ ...base, messages: [{ role: 'assistant', audio: { id: 'audio_1' } }] });
    expect(referenced).toBeGreaterThan(options.audioReferenceTokens);
  });

  it('should price images by size and detail, and unknown sizes at the worst case', () => {
    const png = (width: number, height: number) => {
      const header = Buffer.alloc(24);
      header.writeUInt32BE(0x89504e47, 0);
      header.write('IHDR', 12, 'latin1');
      header.writeUInt32BE(width, 16);
      header.writeUInt32BE(height, 20);
      return `data:image/png;base64,${header.toString('base64')}`;
    };
    const image = (url: string, detail?: string) => withPart({ type: 'image_url', image_url: { url, detail } });
    const text = withPart({ type: 'text', text: '' });
    const tokensOf = (url: string, detail?: string) => image(url, detail) - text;
    // OpenAI's examples: 1024×1024 high is 765 tokens, 2048×4096 is 1105, any low-detail image 85.
    expect(tokensOf(png(1024, 1024), 'high')).toBeGreaterThanOrEqual(765);
    expect(tokensOf(png(1024, 1024), 'high')).toBeLessThan(765 * 1.2);
    expect(tokensOf(png(2048, 4096))).toBeGreaterThanOrEqual(1105);
    expect(tokensOf(png(100, 100), 'low')).toBeLessThan(100);
    expect(tokensOf(png(100, 100))).toBeLessThan(300);
    expect(tokensOf('https://example.com/cat.png')).toBeGreaterThanOrEqual(WORST_GPT_4O_IMAGE);
    expect(tokensOf('data:image/png;base64,AAAA')).toBeGreaterThanOrEqual(WORST_GPT_4O_IMAGE);
  });

  it('should hold an image at the most expensive formula when the upstream is not known', () => {
    const lowImage = { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } };
    const body = { model: 'm', messages: [{ role: 'user', content: [lowImage] }] };
    const unknownUpstream = estimateRequestTokens(body, { audioReferenceTokens: 0 });
    // gpt-4o-mini alone bills 2,833 for a detail:low image.
    expect(unknownUpstream).toBeGreaterThan(2_833);
    expect(estimate(body)).toBeLessThan(200);
  });

  it('should price audio and files by their decoded size', () => {
    const base64 = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');
    const audio = (bytes: number) =>
      withPart({ type: 'input_audio', input_audio: { data: base64(bytes), format: 'mp3' } });
    // One minute of 16 kbit/s speech (120 KB) is at most about 1,900 tokens at 32 tokens a second.
    expect(audio(120_000) - audio(0)).toBeGreaterThanOrEqual(1_900);
    const file = (data: string) => withPart({ type: 'file', file: { filename: 'a.pdf', file_data: data } });
    expect(file(`data:application/pdf;base64,${base64(50_000)}`) - file('')).toBeGreaterThanOrEqual(50_000);
    expect(withPart({ type: 'file', file: { file_id: 'file-1' } })).toBeGreaterThanOrEqual(100_000);
  });

  it('should estimate a 1 MB run without spaces and 1 MB of CJK in bounded time, above their real count', () => {
    const random = new SeededRandom(99);
    for (const content of ['a'.repeat(1 << 20), random.chars(350_000, 0x4e00, 0x9fff)]) {
      // CPU time, the fastest of three: a linear scan takes a few ms on a quiet core, a quadratic one
      // seconds; the bound leaves room for a shared VM, which charges a descheduled core too.
      const spent = [1, 2, 3].map(() =>
        cpuMillisecondsOf(() => estimate({ model: 'm', messages: [{ role: 'user', content }] })),
      );
      expect(Math.min(...spent)).toBeLessThan(250);
      const estimated = estimate({ model: 'm', messages: [{ role: 'user', content }] });
      expect(estimated).toBeGreaterThanOrEqual(Buffer.byteLength(content) / 8);
    }
  });
});

describe(estimateRequest.name, () => {
  it('should give the prediction apart, at least its cl100k count, so it can be held as output', () => {
    const content = 'const answer = computeTheAnswer(42);\n'.repeat(300);
    const { promptTokens, predictionTokens } = estimateRequest(
      { ...base, prediction: { type: 'content', content } },
      options,
    );
    expect(predictionTokens).toBeGreaterThanOrEqual(plain(content));
    expect(promptTokens).toBeGreaterThan(estimate(base));
    expect(estimateRequest(base, options).predictionTokens).toBe(0);
  });
});

describe('estimateRequest with restAsBytes', () => {
  const quick = (body: Record<string, unknown>) => estimateRequest(body, { ...options, restAsBytes: true });

  it('should count a short prompt exactly as without it, and not call it rough', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'What is the capital of France? '.repeat(20) }] };
    expect(quick(body)).toEqual({ promptTokens: estimate(body), predictionTokens: 0, rough: false });
  });

  it('should count a long prompt past the exact budget as its bytes: above the closer bound, and rough', () => {
    const prose = 'The committee reviewed the quarterly budget, and the engineers shipped their fixes. '.repeat(500);
    const body = { model: 'm', messages: [{ role: 'user', content: prose }] };
    const { promptTokens, rough } = quick(body);
    expect(rough).toBe(true);
    expect(promptTokens).toBeGreaterThan(3 * estimate(body));
    expect(promptTokens).toBeLessThanOrEqual(Math.ceil(Buffer.byteLength(prose) * 1.1) + 10);
  });

  it('should count a prompt of over 16k characters as its bytes from its start, and call it rough', () => {
    const prose = 'The committee reviewed the quarterly budget — 東京, Kraków. '.repeat(300);
    const body = {
      model: 'm',
      messages: [
        { role: 'user', content: prose },
        { role: 'user', content: 'Summarise.' },
      ],
    };
    const { promptTokens, rough } = quick(body);

    expect(prose.length).toBeGreaterThan(16 * 1024);
    expect(rough).toBe(true);
    expect(promptTokens).toBeGreaterThanOrEqual(Math.floor(Buffer.byteLength(prose) * 1.1));
    expect(promptTokens).toBeGreaterThan(estimate(body));
  });

  it('should never be below the closer bound, on random schemas and prose', () => {
    const random = new SeededRandom(7);
    for (let round = 0; round < 40; round++) {
      const body = {
        model: 'm',
        messages: [{ role: 'user', content: 'Tell me more. '.repeat(random.int(0, 2000)) }],
        tools: [randomSchema(random)],
      };
      expect(quick(body).promptTokens).toBeGreaterThanOrEqual(estimate(body));
    }
  });
});

describe("estimateRequest with the body's bytes", () => {
  const bytesOf = (body: Record<string, unknown>) => Buffer.byteLength(JSON.stringify(body));
  const withBytes = (body: Record<string, unknown>, restAsBytes: boolean, bodyBytes = bytesOf(body)) =>
    estimateRequest(body, { ...options, restAsBytes, bodyBytes }).promptTokens;
  const measured = (body: Record<string, unknown>, restAsBytes: boolean) =>
    estimateRequest(body, { ...options, restAsBytes }).promptTokens;
  const longText = (random: SeededRandom) =>
    random.pick([
      () => 'Tell me more about it, please.\n'.repeat(random.int(200, 3000)),
      () => random.chars(random.int(2000, 30_000), 0x4e00, 0x9fff),
      () => random.chars(random.int(2000, 10_000), 0x1f600, 0x1f64f),
      () => `Kraków — ${'naïve café '.repeat(random.int(500, 4000))}`,
    ])();

  afterEach(() => jest.restoreAllMocks());

  it("should charge a long prompt past the budgets the body's length rather than measure it", () => {
    const prose = 'The committee reviewed the quarterly budget, and the engineers shipped their fixes. '.repeat(3000);
    const body = { model: 'm', messages: [{ role: 'user', content: `東京 ${prose}` }] };
    const bodyBytes = bytesOf(body);
    const byteLength = jest.spyOn(Buffer, 'byteLength');

    const promptTokens = withBytes(body, true, bodyBytes);

    const measuredTexts = byteLength.mock.calls.map(([text]) => (typeof text === 'string' ? text.length : 0));
    expect(Math.max(0, ...measuredTexts)).toBeLessThan(4096);
    // Above measuring by no more than the JSON around the prompt.
    expect(promptTokens).toBeGreaterThanOrEqual(measured(body, true));
    expect(promptTokens - measured(body, true)).toBeLessThan(100);
  });

  it("should never hold less than when every rest is measured, and no more than the body's length above it", () => {
    const random = new SeededRandom(20);
    for (let round = 0; round < 30; round++) {
      const body = {
        model: 'm',
        system: random.next() < 0.3 ? longText(random) : undefined,
        messages: Array.from({ length: random.int(1, 3) }, () => ({
          role: 'user',
          content: random.next() < 0.5 ? longText(random) : [{ type: 'text', text: longText(random) }],
        })),
        tools: [randomSchema(random), { description: longText(random) }],
      };
      const bodyBytes = bytesOf(body);
      for (const restAsBytes of [true, false]) {
        const charged = withBytes(body, restAsBytes);
        expect(charged).toBeGreaterThanOrEqual(measured(body, restAsBytes));
        expect(charged).toBeLessThanOrEqual(measured(body, restAsBytes) + Math.ceil(bodyBytes * 1.1) + 1);
      }
    }
  });
});

describe(countCompletionTokens.name, () => {
  it('should count delivered completion text', () => {
    expect(countCompletionTokens('')).toBe(0);
    expect(countCompletionTokens('Hello from the mock upstream.')).toBe(plain('Hello from the mock upstream.'));
  });
});

describe(estimateEmbeddingTokens.name, () => {
  it('should hold text at or above its cl100k count and token arrays at their length, with the margin', () => {
    const texts = [
      'The quick brown fox jumps over the lazy dog.',
      '汉字 and emoji 😀',
      'Retrieval-augmented generation',
    ];
    const exact = texts.reduce((sum, text) => sum + plain(text), 0) + 3 + 1;

    const estimated = estimateEmbeddingTokens([...texts, [1, 2, 3], [7]]);

    expect(estimated).toBeGreaterThanOrEqual(exact);
    expect(estimated).toBeLessThanOrEqual(Math.ceil(exact * 1.1) + 1);
    expect(estimateEmbeddingTokens(['a'.repeat(3000)])).toBeGreaterThanOrEqual(plain('a'.repeat(3000)));
  });

  it('should hold exactly the margin over token arrays, which are billed as given', () => {
    expect(estimateEmbeddingTokens([Array.from({ length: 100 }, (_, i) => i)])).toBe(111);
  });
});
