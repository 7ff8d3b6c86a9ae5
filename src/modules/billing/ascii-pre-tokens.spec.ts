import { CL100K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/cjs/encodingParams/constants';
import { asciiPreTokenEnd, firstNonAscii } from 'src/modules/billing/ascii-pre-tokens';
import { SeededRandom } from 'test/support/seeded-random';

const regexPieces = (text: string) =>
  [...text.matchAll(new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, 'gu'))].map((m) => m[0]);

function scannedPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length;) {
    const end = asciiPreTokenEnd(text, start);
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

// Every class the regex tells apart, and the characters its alternatives name one by one.
const ALPHABET = [
  ...'aZsStTdDmMlLvVeErR',
  ...'09',
  ...' \t\v\f\r\n',
  ...`'".,;:!?-_()[]{}<>/\\|@#$%^&*+=~\``,
  '\x00',
  '\x1b',
  '\x7f',
];
const CHUNKS = [
  "'s",
  "'LL",
  "'ve",
  "'Re",
  "'d",
  "'m",
  "'t",
  "'x",
  ' word',
  '\r\n',
  '  \n ',
  '12345',
  ' !!',
  ' \n',
  'Hello',
];

describe('asciiPreTokenEnd', () => {
  it('should split ASCII text into the pieces of cl100k’s own regex', () => {
    const random = new SeededRandom(20261124);
    const differing: { text: string; regex: string[]; scanned: string[] }[] = [];
    for (let round = 0; round < 20_000; round++) {
      const parts = Array.from({ length: random.int(1, 12) }, () =>
        random.int(0, 2) === 0 ? random.pick(CHUNKS) : random.pick(ALPHABET),
      );
      const text = parts.join('');
      const regex = regexPieces(text);
      const scanned = scannedPieces(text);
      if (regex.join('\u0001') !== scanned.join('\u0001')) {
        differing.push({ text, regex, scanned });
      }
    }
    expect(differing.slice(0, 5)).toEqual([]);
  });

  it('should split prose and code like the regex', () => {
    const text =
      "Don't panic: it's 2026, and we'll bill 1,234,567 tokens.\n\n  def f(x):\r\n\treturn x['a'] + 42  \n   end  ";
    expect(scannedPieces(text)).toEqual(regexPieces(text));
  });
});

describe(firstNonAscii.name, () => {
  it('should find the first character outside ASCII from where it is asked to look', () => {
    expect(firstNonAscii('plain \x00\x7f text')).toBe(-1);
    expect(firstNonAscii('café au lait')).toBe(3);
    expect(firstNonAscii('😀')).toBe(0);
    expect(firstNonAscii('café naïve', 4)).toBe(7);
    expect(firstNonAscii('café naïve', 8)).toBe(-1);
  });
});
