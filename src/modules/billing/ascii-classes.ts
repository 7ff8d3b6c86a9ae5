// ASCII character classes for the loops that scan prompts (ascii-pre-tokens.ts, token-bound.ts): as
// small integers, so that a hot loop compares numbers instead of running a regex per character.

export const LETTER = 1;
export const DIGIT = 2;
/** \s other than a line break (and other than the space, when the space has its own class). */
export const WHITESPACE = 3;
export const LINE_BREAK = 4;
/** Neither letter, digit nor whitespace: punctuation, symbols, control characters. */
export const OTHER = 5;
/** The space (0x20), in a table that sets it apart: the space that leads a word or punctuation. */
export const SPACE = 6;

/** Each ASCII code's class; `spaceApart`: the space gets SPACE instead of WHITESPACE. */
export function asciiClasses(spaceApart: boolean): Uint8Array {
  const table = new Uint8Array(128).fill(OTHER);
  for (let code = 0; code < 128; code++) {
    const char = String.fromCharCode(code);
    if (/[A-Za-z]/.test(char)) {
      table[code] = LETTER;
    } else if (/[0-9]/.test(char)) {
      table[code] = DIGIT;
    } else if (char === '\r' || char === '\n') {
      table[code] = LINE_BREAK;
    } else if (spaceApart && char === ' ') {
      table[code] = SPACE;
    } else if (/\s/.test(char)) {
      table[code] = WHITESPACE;
    }
  }
  return table;
}
