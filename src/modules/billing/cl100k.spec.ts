import libraryRanks from 'gpt-tokenizer/cjs/bpeRanks/cl100k_base';
import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { CL100K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/cjs/encodingParams/constants';
import { cl100kTextTokens, isCl100kToken, mergedCl100kTokens } from 'src/modules/billing/cl100k';
import { SeededRandom } from 'test/support/seeded-random';

const PLAIN = { disallowedSpecial: new Set<string>() };

/** The text's count as the sum of its pre-tokens' counts: how the gateway counts with this module. */
function countByPreTokens(text: string): number {
  let tokens = 0;
  for (const [preToken] of text.matchAll(new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, 'gu'))) {
    tokens += mergedCl100kTokens(preToken);
  }
  return tokens;
}

describe('cl100k read from the data file', () => {
  it("holds exactly the text tokens of the library's generated module, and those starting with a byte-order mark", () => {
    const libraryTexts = libraryRanks.filter((entry): entry is string => typeof entry === 'string');
    const texts = cl100kTextTokens();
    // The library's generator decodes with a decoder that drops a leading BOM, so it keeps those eight as bytes.
    expect(texts.filter((text) => !text.startsWith('\ufeff'))).toEqual(libraryTexts);
    expect(texts.filter((text) => text.startsWith('\ufeff'))).toHaveLength(8);
    expect(libraryTexts.every((entry) => isCl100kToken(entry))).toBe(true);
  });

  it('tells a token from text that is not one', () => {
    expect(isCl100kToken(' the')).toBe(true);
    expect(isCl100kToken('!')).toBe(true);
    expect(isCl100kToken(' gatewayzzqx')).toBe(false);
    expect(isCl100kToken('')).toBe(false);
    expect(isCl100kToken('x'.repeat(10_000))).toBe(false);
  });

  it('counts like the library, special-token text and broken text included', () => {
    const texts = [
      'The quick brown fox jumps over the lazy dog.',
      '你好，世界！これはテストです 🎉🎉 ñandú Ω≈ç√',
      'function f(x) { return x ** 2; } // 12345678901234567890',
      '<|endoftext|> and <|fim_prefix|> as text',
      '\u0000\u00ff\ufffd broken \ud83d lone surrogate \udc00',
      'a'.repeat(3000),
      'supercalifragilisticexpialidocious antidisestablishmentarianism',
    ];
    for (const text of texts) {
      expect({ text, tokens: countByPreTokens(text) }).toEqual({ text, tokens: countTokens(text, PLAIN) });
    }
  });

  it('counts a byte-order mark as tiktoken does, by its bytes', () => {
    // The library looks bytes up as text, and its decoder drops the mark: it counts '\ufeffusing' as 3, the mark alone as 2.
    expect(mergedCl100kTokens('\ufeffusing')).toBe(1);
    expect(mergedCl100kTokens('\ufeff')).toBe(1);
    expect(mergedCl100kTokens('\ufeff\ufeff')).toBe(2);
  });

  it('counts random text of every script like the library', () => {
    const random = new SeededRandom(20261125);
    const ranges: [number, number][] = [
      [0x20, 0x7e],
      [0x61, 0x7a],
      [0x00, 0xff],
      [0x400, 0x4ff],
      [0x4e00, 0x9fff],
      [0x20, 0x2fff],
      [0x1f300, 0x1f6ff],
    ];
    const differing: { text: string; library: number; ours: number }[] = [];
    for (let round = 0; round < 40; round++) {
      for (const [from, to] of ranges) {
        const text = random.chars(random.int(1, 400), from, to);
        const library = countTokens(text, PLAIN);
        const ours = countByPreTokens(text);
        if (ours !== library) {
          differing.push({ text, library, ours });
        }
      }
    }
    expect(differing).toEqual([]);
  });

  it('counts a piece the same after longer and shorter ones have used the scratch space', () => {
    const long = 'zqxjvkwpfgq'.repeat(200); // one pre-token of 2,200 letters
    const short = ' zqxjv';
    const counts = [long, short, long, short].map((piece) => mergedCl100kTokens(piece));
    expect(counts).toEqual([long, short, long, short].map((piece) => countTokens(piece, PLAIN)));
  });
});
