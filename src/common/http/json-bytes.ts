/*
 * Reading JSON text as UTF-8 bytes, without decoding it: every byte of JSON's syntax is ASCII, and no
 * byte of a multi-byte UTF-8 character is, so a quote, a backslash or a brace inside one cannot be
 * mistaken for syntax.
 */

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;

/** Just past the string starting at the quote at `start`, or -1 if it never closes. */
export function stringEnd(text: Buffer, start: number): number {
  for (let from = start + 1; ;) {
    const quote = text.indexOf(QUOTE, from);
    if (quote < 0) {
      return -1;
    }
    // Escaped when an odd number of backslashes precede it (the opening quote stops the count).
    let backslashes = 0;
    while (text[quote - 1 - backslashes] === BACKSLASH) {
      backslashes++;
    }
    if (backslashes % 2 === 0) {
      return quote + 1;
    }
    from = quote + 1;
  }
}

export function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

export function skipSpace(text: Buffer, from: number): number {
  let at = from;
  while (at < text.length && isSpace(text[at])) {
    at++;
  }
  return at;
}
