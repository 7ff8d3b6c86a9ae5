/*
 * Shape checks for base64 payloads (images as data URIs, audio), which run to megabytes, on the event
 * loop of every request carrying one. For 1.33 MB of base64 (a 1 MB image), in V8: an anchored regex
 * 6–8 ms; a table lookup per `charCodeAt` 2.6 ms; the same lookup over the bytes of a reused Buffer the
 * text is copied into (latin1, a memcpy for the one-byte strings V8 keeps base64 in) 2.3–3.7 ms on the
 * AMD host; that buffer read as 32-bit words, 16 bytes to a loop turn with one branch, 0.5–0.7 ms.
 */

const DATA_URI_HEAD = /^data:[\w.+-]+\/[\w.+-]+;base64,/;
/** Longer than any media type a client sends; the head is matched on this much only. */
const HEAD_MAX_CHARS = 256;
const ALPHABET = (() => {
  const table = new Uint8Array(256);
  for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') {
    table[char.charCodeAt(0)] = 1;
  }
  return table;
})();
const PAD = 0x3d;
/** Text is checked this many characters at a time, through one buffer allocated on first use. */
const CHUNK_CHARS = 1 << 20;
let chunkBytes: Buffer | undefined;
// The same bytes as 32-bit words (the buffer is its own ArrayBuffer, from offset 0).
let chunkWords: Int32Array | undefined;
// A latin1 copy keeps only the low byte of a character above U+00FF, which could then pass for a
// base64 one; this test finds such a character, and costs nothing on a string V8 stores one byte per
// character (it cannot match there), which every valid payload is.
const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/** `data:<type>/<subtype>;base64,<base64>`, as /^data:[\w.+-]+\/[\w.+-]+;base64,[A-Za-z0-9+/]+={0,2}$/ would match. */
export function isBase64DataUri(text: string): boolean {
  const head = DATA_URI_HEAD.exec(text.slice(0, HEAD_MAX_CHARS));
  return head !== null && isBase64(text, head[0].length);
}

/** From `start` on, one or more base64 characters then at most two `=`, as /^[A-Za-z0-9+/]+={0,2}$/ would match. */
export function isBase64(text: string, start = 0): boolean {
  let end = text.length;
  for (let pads = 0; pads < 2 && end > start && text.charCodeAt(end - 1) === PAD; pads++) {
    end--;
  }
  if (end === start) {
    return false;
  }
  chunkBytes ??= Buffer.allocUnsafeSlow(CHUNK_CHARS);
  chunkWords ??= new Int32Array(chunkBytes.buffer, chunkBytes.byteOffset, CHUNK_CHARS / 4);
  for (let at = start; at < end; at += CHUNK_CHARS) {
    const chunk = text.slice(at, Math.min(end, at + CHUNK_CHARS));
    if (BEYOND_LATIN1.test(chunk) || !inAlphabet(chunkBytes, chunkWords, chunkBytes.write(chunk, 0, 'latin1'))) {
      return false;
    }
  }
  return true;
}

/** Whether the first `length` bytes are all base64 characters: 16 at a time through `words`, then one by one. */
function inAlphabet(bytes: Buffer, words: Int32Array, length: number): boolean {
  const blockEnd = (length >> 4) << 2;
  for (let word = 0; word < blockEnd; word += 4) {
    if ((inWord(words[word]) & inWord(words[word + 1]) & inWord(words[word + 2]) & inWord(words[word + 3])) === 0) {
      return false;
    }
  }
  for (let byte = blockEnd * 4; byte < length; byte++) {
    if (ALPHABET[bytes[byte]] === 0) {
      return false;
    }
  }
  return true;
}

/** 1 when all four bytes of `word` are base64 characters, else 0. */
function inWord(word: number): number {
  return ALPHABET[word & 0xff] & ALPHABET[(word >>> 8) & 0xff] & ALPHABET[(word >>> 16) & 0xff] & ALPHABET[word >>> 24];
}
