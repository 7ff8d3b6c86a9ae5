import libraryRanks from 'gpt-tokenizer/cjs/bpeRanks/cl100k_base';
import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { CL100K_RANKS, CL100K_VOCABULARY, countCl100kTokens } from 'src/modules/billing/cl100k';

describe('cl100k read from the data file', () => {
  it("holds exactly the ranks of the library's generated module", () => {
    expect(CL100K_RANKS).toEqual(libraryRanks);
    expect(CL100K_VOCABULARY.size).toBe(libraryRanks.filter((entry) => typeof entry === 'string').length);
  });

  it('counts like the library, special-token text included', () => {
    const plain = { disallowedSpecial: new Set<string>() };
    const texts = [
      'The quick brown fox jumps over the lazy dog.',
      '你好，世界！これはテストです 🎉🎉 ñandú Ω≈ç√',
      'function f(x) { return x ** 2; } // 12345678901234567890',
      '<|endoftext|> and <|fim_prefix|> as text',
      '\u0000\u00ff\ufffd broken \ud83d lone surrogate',
    ];
    for (const text of texts) {
      expect(countCl100kTokens(text, plain)).toBe(countTokens(text, plain));
    }
  });
});
