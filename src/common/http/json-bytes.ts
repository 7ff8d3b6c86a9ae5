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

const CONTROL_LIMIT = 0x20;
// Each byte of a 32-bit word: 0x20 subtracted from each, and the top bit of each.
const CONTROL_LIMITS = 0x20202020;
const TOP_BITS = 0x80808080 | 0;

/**
 * Whether `bytes` hold a control character (below 0x20), which a JSON string may only hold escaped.
 * Four bytes at a time: a byte below 0x20 is one that borrows when 0x20 is subtracted from it without
 * having had its top bit set. A regular expression over the decoded text took four times as long
 * (1.2–1.4 ms for a 1 MB image, 0.3 ms here; docs/performance.md, "Large bodies stay bytes").
 */
export function hasControlByte(bytes: Uint8Array): boolean {
  // A view of words must start at a multiple of four.
  const head = (4 - (bytes.byteOffset % 4)) % 4;
  if (bytes.length < head + 4) {
    return hasControlByteIn(bytes, 0, bytes.length);
  }
  const words = new Int32Array(bytes.buffer, bytes.byteOffset + head, (bytes.length - head) >>> 2);
  const tail = head + words.length * 4;
  if (hasControlByteIn(bytes, 0, head) || hasControlByteIn(bytes, tail, bytes.length)) {
    return true;
  }
  let at = 0;
  // Four words an iteration, or-ed together: one branch for 16 bytes.
  for (const unrolled = words.length - 3; at < unrolled; at += 4) {
    if ((borrows(words[at]) | borrows(words[at + 1]) | borrows(words[at + 2]) | borrows(words[at + 3])) & TOP_BITS) {
      return true;
    }
  }
  for (; at < words.length; at++) {
    if (borrows(words[at]) & TOP_BITS) {
      return true;
    }
  }
  return false;
}

function borrows(word: number): number {
  return ((word - CONTROL_LIMITS) | 0) & ~word;
}

function hasControlByteIn(bytes: Uint8Array, from: number, to: number): boolean {
  for (let at = from; at < to; at++) {
    if (bytes[at] < CONTROL_LIMIT) {
      return true;
    }
  }
  return false;
}
