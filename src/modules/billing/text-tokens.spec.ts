import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { countTextTokens, requestTokenBudget } from 'src/modules/billing/text-tokens';
import { SeededRandom } from 'test/support/seeded-random';
import { cpuMillisecondsOf } from 'test/support/cpu-time';

const WORDS = [
  'the',
  'gateway',
  'bills',
  "don't",
  'Hello',
  'naïve',
  'résumé',
  'x',
  'tokenizer',
  'supercalifragilistic',
];
const exactCount = (text: string) => countTokens(text, { disallowedSpecial: new Set() });

/** Texts of every shape a prompt takes, from one seed. */
function sampleTexts(random: SeededRandom): string[] {
  const words = (count: number, separator = ' ') =>
    Array.from({ length: count }, () => random.pick(WORDS)).join(separator);
  return [
    words(random.int(1, 800)),
    'a'.repeat(random.int(1, 3000)),
    random.chars(random.int(1, 1500), 0x4e00, 0x9fff),
    random.chars(random.int(1, 600), 0x1f600, 0x1f64f),
    `function ${words(1)}(x) {\n  return x.${words(1)} + ${random.int(0, 1e9)};\n}\n`.repeat(random.int(1, 40)),
    JSON.stringify({ [words(1)]: words(20), nested: { list: [words(5), random.int(0, 99999)] } }),
    `${words(30)}${random.chars(random.int(300, 900), 0x61, 0x7a)}${words(30)}`,
    words(random.int(10, 300), random.pick(['', '\n', '  ', '\t', '-', '.', '__', '\r\n'])),
    `${' '.repeat(random.int(1, 700))}${'\n'.repeat(random.int(1, 50))}${words(3)}${' '.repeat(random.int(1, 9))}`,
    `${random.chars(random.int(1, 400), 0x21, 0x7e)} <|endoftext|> ${'1234567890'.repeat(random.int(1, 90))}`,
    random.chars(random.int(1, 2000), 0x20, 0x2fff),
  ];
}

describe(countTextTokens.name, () => {
  it('should never count below cl100k, whatever the text and the budget left', () => {
    const random = new SeededRandom(20261124);
    const below: { text: string; exact: number; estimate: number }[] = [];
    for (let round = 0; round < 12; round++) {
      for (const text of sampleTexts(random)) {
        const exact = exactCount(text);
        const budgets = [
          requestTokenBudget(),
          {
            pieces: random.int(1, 600),
            merge: random.int(1, 300),
            bound: random.int(0, 5000),
            merged: new Map<string, number>(),
          },
          { pieces: 1 << 20, merge: 0, bound: 1 << 20, merged: new Map<string, number>() },
          { pieces: 0, merge: 0, bound: 0, merged: new Map<string, number>() },
          { pieces: 0, merge: 0, bound: 1 << 20, merged: new Map<string, number>() },
        ];
        for (const budget of budgets) {
          const estimate = countTextTokens(text, budget);
          if (estimate < exact) {
            below.push({ text: text.slice(0, 80), exact, estimate });
          }
        }
      }
    }
    expect(below).toEqual([]);
  });

  it('should count text with word breaks exactly while the budget lasts', () => {
    const random = new SeededRandom(7);
    const text = Array.from({ length: 200 }, () => random.pick(WORDS)).join(random.pick([' ', ', ', '\n']));
    expect(countTextTokens(text, requestTokenBudget())).toBe(exactCount(text));
  });

  it('should count ASCII prose with other scripts in it exactly, whatever stands next to them', () => {
    const random = new SeededRandom(11);
    const foreign = [
      'Kraków,',
      '— a dash',
      'smörgåsbord.',
      '東京では',
      'x²',
      '🎉!',
      "l'été",
      'ÑANDÚ',
      '«quoted»',
      'naïve',
    ];
    const separators = [' ', '', ', ', '\n', '  ', '-'];
    const text = Array.from(
      { length: 120 },
      () => (random.int(0, 3) === 0 ? random.pick(foreign) : random.pick(WORDS)) + random.pick(separators),
    ).join('');
    expect(countTextTokens(text, requestTokenBudget())).toBe(exactCount(text));
  });

  it('should bound a text longer than the budget allows to count exactly from its start, and count the short ones after it exactly', () => {
    const random = new SeededRandom(20);
    const long = Array.from({ length: 4_000 }, () => random.pick(WORDS)).join(random.pick([' ', ', ', '\n']));
    const short = 'What is the capital of France?';
    const budget = requestTokenBudget({ exactTextChars: 16 * 1024 });

    expect(long.length).toBeGreaterThan(16 * 1024);
    expect(countTextTokens(long, budget)).toBe(countTextTokens(long, requestTokenBudget({ pieces: 0 })));
    expect(countTextTokens(long, requestTokenBudget())).toBeGreaterThanOrEqual(exactCount(long));
    expect(budget.bounded).toBe(true);
    expect(countTextTokens(short, budget)).toBe(exactCount(short));
  });

  it('should count special-token text as plain text instead of throwing', () => {
    expect(countTextTokens('<|endoftext|><|im_start|>', requestTokenBudget())).toBe(
      exactCount('<|endoftext|><|im_start|>'),
    );
  });

  // A text to count arrives flat, parsed from a body. `repeat` builds a rope that the first read
  // flattens: 20 MB of fresh memory, which took 100 ms on a host where new pages fault slowly
  // (docs/performance.md, "Large bodies stay bytes"), for 3–7 ms of counting. A regular expression flattens it first.
  const flattened = (text: string) => {
    /./.test(text);
    return text;
  };

  it.each([
    ['1 MB of one letter', () => 'a'.repeat(1 << 20)],
    ['1 MB of random CJK', (seed: number) => new SeededRandom(seed).chars(350_000, 0x4e00, 0x9fff)],
    ['1 MB of words', () => 'lorem ipsum dolor sit amet '.repeat(40_000)],
    ['1 MB of random printable text', (seed: number) => new SeededRandom(seed).chars(1 << 20, 0x21, 0x7e)],
    ['20 MB of one letter', () => 'b'.repeat(20 << 20)],
  ])(
    'should count %s in linear time (well under 20 ms of work on a quiet core)',
    (_name, make: (seed: number) => string) => {
      countTextTokens(make(0).slice(0, 1000), requestTokenBudget()); // compiled and warm
      // The fastest of three fresh texts, in CPU time: the work itself, without a busy machine's pauses.
      // 1–5 ms measured on a quiet core (random printable text about 15). On this shared VM a descheduled
      // core is still charged, so the bound leaves room for that; a quadratic pass would take seconds.
      const spent = [1, 2, 3].map((seed) => {
        const text = flattened(make(seed));
        let count = 0;
        const milliseconds = cpuMillisecondsOf(() => (count = countTextTokens(text, requestTokenBudget())));
        expect(count).toBeGreaterThan(0);
        return milliseconds;
      });
      expect(Math.min(...spent)).toBeLessThan(250);
    },
  );
});
