import ranks from 'gpt-tokenizer/cjs/bpeRanks/cl100k_base';
import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { lastCutPoint } from 'src/modules/billing/text-tokens';
import { boundTextTokens } from 'src/modules/billing/token-bound';
import { SeededRandom } from 'test/support/seeded-random';
import { seededProse } from 'tools/bench/seeded-prose';
import { cpuMillisecondsOf } from 'test/support/cpu-time';

const exactCount = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
const vocabulary = new Set(ranks.filter((entry): entry is string => typeof entry === 'string'));

// Every class the scan tells apart, and the characters it treats one by one.
const ALPHABET = [
  ...'aAeEsStTdDmMlLvVrRqQxXzZBb',
  ...'0179',
  ...' \t\v\f\r\n',
  ...`'".,;:!?-_()[]{}<>/\\|@#$%^&*+=~\``,
  '\x00',
  '\x1b',
  '\x7f',
  // Outside ASCII: letters, a numeral, whitespace, a letter and an emoji beyond the BMP, CJK.
  'é',
  'ï',
  'Ж',
  '٣',
  '½',
  '\u00a0',
  '\u3000',
  '𝐀',
  '😀',
  '東',
  '—',
  // Lone halves of a surrogate pair (JSON's "\ud800" gives one): the tokenizer reads each as U+FFFD.
  '\ud800',
  '\udc00',
];
const CHUNKS = [
  "'s",
  "'LL",
  "'ve",
  "'Re",
  "n't",
  ' the',
  ' hello',
  'Hello',
  ' antidisestablishment',
  'qzxj',
  '    ',
  '\n\n',
  ' \n ',
  '\r\n',
  '12345',
  '٣٣1',
  '...',
  ' ...',
  '```',
  '<|endoftext|>',
];

function randomMix(random: SeededRandom, length: number): string {
  let text = '';
  while (text.length < length) {
    text += random.next() < 0.3 ? random.pick(CHUNKS) : random.pick(ALPHABET);
  }
  return text;
}

function words(random: SeededRandom, count: number, separators: string[]): string {
  const pool = ['the', 'gateway', "don't", 'Hello', 'naïve', 'résumé', 'x', 'tokenizer', 'supercalifragilistic', 'IBM'];
  return Array.from({ length: count }, () => random.pick(pool) + random.pick(separators)).join('');
}

/** Texts of every shape a prompt takes, and the shapes a bound is most likely to get wrong. */
function sampleTexts(random: SeededRandom): string[] {
  return [
    seededProse(random.int(100, 20_000), random.int(1, 1e6)),
    words(random, random.int(1, 500), [' ', ', ', '. ', '\n', '\n\n', '  ', '\t', '-', '']),
    'a'.repeat(random.int(1, 5000)),
    random.chars(random.int(1, 300), 0x61, 0x7a),
    random.chars(random.int(1, 300), 0x41, 0x7a),
    random.chars(random.int(1, 1500), 0x4e00, 0x9fff),
    random.chars(random.int(1, 400), 0x1f600, 0x1f64f),
    random.chars(random.int(1, 2000), 0x20, 0x7e),
    random.chars(random.int(1, 500), 0x00, 0x7f),
    random.chars(random.int(1, 1000), 0x20, 0x2fff),
    '1234567890'.repeat(random.int(1, 90)) + random.pick(['', 'x', ' ', '٣', 'é']),
    ' '.repeat(random.int(1, 700)) + random.pick(['x', '.', '1', '', '\n', 'é', '\t']),
    `${' '.repeat(random.int(1, 50))}${'\n'.repeat(random.int(1, 5))}${'\t'.repeat(random.int(0, 3))} x`,
    `function f(x) {\n\treturn x.${words(random, 1, [''])} + ${random.int(0, 1e9)};\n}\n`.repeat(random.int(1, 30)),
    JSON.stringify({ key: words(random, 20, [' ']), nested: { list: [random.int(0, 99999), 'x'] } }, null, 2),
    randomMix(random, random.int(1, 3000)),
  ];
}

describe(boundTextTokens.name, () => {
  it('should never count below cl100k, on random and adversarial text', () => {
    const random = new SeededRandom(20261124);
    const below: { text: string; exact: number; bound: number }[] = [];
    for (let round = 0; round < 25; round++) {
      for (const text of sampleTexts(random)) {
        const exact = exactCount(text);
        const bound = boundTextTokens(text);
        if (bound < exact) {
          below.push({ text: text.slice(0, 120), exact, bound });
        }
      }
    }
    expect(below).toEqual([]);
  });

  it('should never count below cl100k on short mixes of the characters it tells apart', () => {
    // Every pair and many triples and longer runs: the places a pre-token boundary could be misjudged.
    const random = new SeededRandom(99);
    const below: string[] = [];
    const check = (text: string) => {
      if (boundTextTokens(text) < exactCount(text)) {
        below.push(text);
      }
    };
    for (const first of ALPHABET) {
      for (const second of ALPHABET) {
        check(first + second);
        check(`${first}${second}${random.pick(ALPHABET)}`);
      }
    }
    for (let round = 0; round < 20_000; round++) {
      check(randomMix(random, random.int(2, 24)));
    }
    expect(below).toEqual([]);
  });

  it('should bound the rest of a text from a cut point, as the exact count hands over', () => {
    const random = new SeededRandom(5);
    const below: string[] = [];
    for (let round = 0; round < 200; round++) {
      const text = randomMix(random, random.int(10, 400)) + seededProse(random.int(100, 2000), round);
      const cut = lastCutPoint(text.slice(0, random.int(1, text.length)));
      if (exactCount(text.slice(0, cut)) + boundTextTokens(text, cut) < exactCount(text)) {
        below.push(text.slice(0, 80));
      }
    }
    expect(below).toEqual([]);
  });

  // The reference encoder's exact counts of these fixed texts, recorded: its merges are quadratic on a
  // long run of one kind of character, 10-40 s of CPU for each of the first four.
  it.each([
    ['a × 100k', 'a'.repeat(100_000), 12_500],
    ['a space × 100k', ' '.repeat(100_000), 782],
    ['CJK', new SeededRandom(1).chars(50_000, 0x4e00, 0x9fff), 117_835],
    ['emoji', new SeededRandom(2).chars(20_000, 0x1f600, 0x1f64f), 43_683],
    ['digits', '9'.repeat(100_000), 33_334],
    ['random letters', new SeededRandom(3).chars(100_000, 0x41, 0x7a), 68_283],
  ])('should hold on long adversarial text: %s', (_name, text, exact) => {
    expect(boundTextTokens(text)).toBeGreaterThanOrEqual(exact);
  });

  it('should stay close to the exact count on prose, far below its bytes', () => {
    const prose = seededProse(256 * 1024, 256 * 1024);
    const exact = exactCount(prose);
    const bound = boundTextTokens(prose);
    expect(bound).toBeGreaterThanOrEqual(exact);
    expect(bound / exact).toBeLessThan(1.4);
    expect(bound).toBeLessThan(Buffer.byteLength(prose) / 3);
  });

  it('should rest on vocabulary facts that hold', () => {
    // Every run of one to three digits is one token; every ASCII letter after a space pairs into one.
    for (let number = 0; number < 1000; number++) {
      for (const digits of [String(number), String(number).padStart(2, '0'), String(number).padStart(3, '0')]) {
        expect(vocabulary.has(digits)).toBe(true);
      }
    }
    for (const letter of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz') {
      expect(vocabulary.has(` ${letter}`)).toBe(true);
    }
  });

  it('should bound 1 MB in linear time (a few milliseconds on a quiet core)', () => {
    const prose = seededProse(1 << 20, 1);
    boundTextTokens(prose.slice(0, 10_000)); // compiled and warm
    // CPU time, not wall time: test files run side by side, and a file waiting for the core is not slow.
    const spent = [1, 2, 3].map(() => cpuMillisecondsOf(() => boundTextTokens(prose)));
    // About 4 ms on a quiet core. On this shared VM a descheduled core is still charged, so the bound
    // leaves room for that; a quadratic pass over 1 MB would take seconds.
    expect(Math.min(...spent)).toBeLessThan(250);
  });
});
