import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { DeliveredTokens } from 'src/modules/relay/upstream/delivered-tokens';

/** A deterministic pseudo-random text of words, digits, punctuation, CJK and newlines. */
function sampleText(seed: number, length: number): string {
  const alphabet = ['hello', ' world', ' 12345', ',', '.', '\n', '  ', '你好', 'über', ' the', '\t', '{"a":1}', 'ing'];
  let state = seed;
  let text = '';
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    text += alphabet[state % alphabet.length];
  }
  return text;
}

describe(DeliveredTokens.name, () => {
  it('should count at least as many tokens as the whole text has, whatever the pieces', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const text = sampleText(seed, 60_000);
      const sut = new DeliveredTokens();
      let at = 0;
      while (at < text.length) {
        const size = 1 + ((seed * 7919 + at) % 97);
        sut.add(text.slice(at, at + size));
        at += size;
      }
      // The reference is the tokenizer itself, on the whole text.
      const whole = countTokens(text);
      expect(sut.total()).toBeGreaterThanOrEqual(whole);
      // An upper bound, not a guess: close to the exact count.
      expect(sut.total()).toBeLessThan(whole * 1.01 + 10);
    }
  });

  it('should count text without spaces cut anywhere as an upper bound', () => {
    const sut = new DeliveredTokens();
    const text = 'a'.repeat(20_000);
    for (let at = 0; at < text.length; at += 333) {
      sut.add(text.slice(at, at + 333));
    }
    expect(sut.total()).toBeGreaterThanOrEqual(countTokens(text));
  });

  it('should count nothing for nothing delivered', () => {
    expect(new DeliveredTokens().total()).toBe(0);
  });
});

describe('DeliveredTokens cost', () => {
  it('should count 1 MB of text without spaces quickly (the tokenizer is quadratic on long runs)', () => {
    const sut = new DeliveredTokens();
    const startedAt = performance.now();
    for (let i = 0; i < 100; i++) {
      sut.add('x'.repeat(10_000));
    }
    expect(sut.total()).toBeGreaterThan(0);
    expect(performance.now() - startedAt).toBeLessThan(3_000);
  });
});
