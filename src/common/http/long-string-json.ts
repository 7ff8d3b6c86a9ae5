import { randomBytes } from 'node:crypto';
import { isAscii, transcode } from 'node:buffer';
import { BACKSLASH, COLON, hasControlByte, QUOTE, skipSpace, stringEnd } from 'src/common/http/json-bytes';

/*
 * A prompt or an image is usually one JSON string of tens of kilobytes to megabytes. JSON.parse reads
 * it a character at a time, after the whole body was decoded into a string of its size, then copies
 * it onto the V8 heap again: two strings of that size a request, each in pages of V8's large-object
 * space that are fresh every time (page faults: on some hosts most of a large prompt's cost,
 * docs/performance.md, "Large bodies stay bytes"). Such a string is instead cut out of the text JSON.parse
 * reads and decoded by Node straight from the body's bytes, once (stringValue): its escapes resolved
 * in the bytes, then
 * - when what is left is ASCII (an image's base64, English), a latin1 copy; from OFF_HEAP_CHARS
 *   characters on Node keeps it outside the V8 heap too. V8 still counts it, as it counts the body's
 *   buffers, towards the next full collection until one frees it (api-runtime.ts);
 * - otherwise converted to UTF-16 outside the heap (`transcode`, SIMD code) and copied into the one
 *   string.
 */

/** The length from which Node decodes latin1 into a string outside the V8 heap (its `EXTERN_APEX`). */
export const OFF_HEAP_CHARS = 0xfbee9;
/** Strings from this length on are decoded on their own; shorter ones cost JSON.parse little. */
export const LONG_STRING_CHARS = 64 * 1024;
/**
 * Strings with escapes or text outside ASCII from this many bytes on are decoded on their own. Below
 * it, the body's text and the value are strings small enough for V8's regular pages, JSON.parse's
 * native scan beats the unescaping here, and nothing is saved (docs/performance.md, "Large bodies stay
 * bytes").
 */
export const LONG_UTF8_STRING_BYTES = 128 * 1024;
// Node built without ICU has no `transcode`; official builds and images have it.
export const HAS_TRANSCODE = typeof transcode === 'function';

/** A body with more strings than this is parsed whole: looking for long ones would cost more than it saves. */
const MAX_SCANNED_STRINGS = 10_000;
// What a long string is replaced by in the parsed text, numbered. Random, so that a client cannot
// send it; and each must be found exactly once in the parsed value, or the body is parsed whole.
const HOLE = `long-string-${randomBytes(8).toString('hex')}-`;

interface StringSpan {
  /** The opening quote. */
  start: number;
  /** Just past the closing quote. */
  end: number;
}

/** JSON.parse of `bytes`, which are all ASCII, with its long strings decoded on their own. */
export function parseAsciiJson(bytes: Buffer): unknown {
  const long = bytes.length > LONG_STRING_CHARS ? longStrings(bytes, LONG_STRING_CHARS, LONG_UTF8_STRING_BYTES) : [];
  if (long.length > 0) {
    const parsed = JSON.parse(holedText(bytes, long, 'latin1')) as unknown;
    if (fillHoles(parsed, long, (span) => stringValue(bytes, span))) {
      return parsed;
    }
  }
  return JSON.parse(bytes.toString('latin1'));
}

/**
 * JSON.parse of `bytes`, which are valid UTF-8 (checked by the caller), with its long strings decoded
 * on their own; `decode` gives the whole text when the body is parsed whole.
 */
export function parseUtf8Json(bytes: Buffer, decode: (bytes: Buffer) => string): unknown {
  const long = bytes.length > LONG_UTF8_STRING_BYTES && HAS_TRANSCODE ? longStrings(bytes, LONG_UTF8_STRING_BYTES) : [];
  if (long.length > 0) {
    const parsed = JSON.parse(holedText(bytes, long, 'utf8')) as unknown;
    if (fillHoles(parsed, long, (span) => stringValue(bytes, span))) {
      return parsed;
    }
  }
  return JSON.parse(decode(bytes));
}

/**
 * The string values of `minBytes` or more, in order; those holding an escape only from `minEscapedBytes`.
 * The bytes are read as JSON.parse's lexer reads them: outside a string a quote opens one, inside it
 * the next unescaped quote closes it. None when the text has too many strings or an unclosed one (it
 * is parsed whole).
 */
function longStrings(bytes: Buffer, minBytes: number, minEscapedBytes = minBytes): StringSpan[] {
  const spans: StringSpan[] = [];
  let at = 0;
  for (let strings = 0; strings < MAX_SCANNED_STRINGS; strings++) {
    const start = bytes.indexOf(QUOTE, at);
    if (start < 0) {
      return spans;
    }
    const end = stringEnd(bytes, start);
    if (end < 0) {
      return [];
    }
    const length = end - start - 2;
    const isLongValue =
      length >= minBytes &&
      bytes[skipSpace(bytes, end)] !== COLON &&
      (length >= minEscapedBytes || bytes.subarray(start + 1, end - 1).indexOf(BACKSLASH) < 0);
    if (isLongValue) {
      spans.push({ start, end });
    }
    at = end;
  }
  return [];
}

/** The text with each long string's characters replaced by its numbered hole. */
function holedText(bytes: Buffer, long: StringSpan[], encoding: 'latin1' | 'utf8'): string {
  let text = '';
  let at = 0;
  long.forEach((span, index) => {
    text += bytes.toString(encoding, at, span.start + 1) + HOLE + index;
    at = span.end - 1;
  });
  return text + bytes.toString(encoding, at);
}

/**
 * Puts each long string in its hole, decoded by `decode`. False when a hole is not found exactly once
 * (the client sent one) or `decode` finds a long string that is not JSON (null).
 */
function fillHoles(parsed: unknown, long: StringSpan[], decode: (span: StringSpan) => string | null): boolean {
  const filled = new Uint8Array(long.length);
  const fill = (hole: string): string | null => {
    const index = Number(hole.slice(HOLE.length));
    const span = long[index];
    if (span === undefined || filled[index] === 1) {
      return null;
    }
    filled[index] = 1;
    return decode(span);
  };
  const pending: unknown[] = [parsed];
  for (let value = pending.pop(); value !== undefined; value = pending.pop()) {
    if (typeof value !== 'object' || value === null) {
      continue;
    }
    // An array's indices, or an object's own keys (a `__proto__` one is set as JSON.parse sets it).
    const container = value as Record<string, unknown>;
    const keys = Array.isArray(value) ? value.keys() : Object.keys(container);
    for (const key of keys) {
      const child = container[key];
      if (typeof child !== 'string') {
        pending.push(child);
      } else if (child.startsWith(HOLE)) {
        const text = fill(child);
        if (text === null) {
          return false;
        }
        Object.defineProperty(container, key, { value: text });
      }
    }
  }
  return filled.every((once) => once === 1);
}

/**
 * The value of the JSON string at `span` in valid UTF-8 `bytes`, as JSON.parse gives it, or null when
 * it is not a JSON string (a control character, an unknown or cut escape) or holds a lone surrogate,
 * which UTF-8 cannot carry: the body is then parsed whole, which fails or gives that value. Its escapes
 * are resolved in the bytes (found by a native search, the text between them copied natively): a
 * JavaScript pass over every character cost three times as much (docs/performance.md, "Large bodies stay
 * bytes").
 */
function stringValue(bytes: Buffer, { start, end }: StringSpan): string | null {
  const characters = bytes.subarray(start + 1, end - 1);
  if (hasControlByte(characters)) {
    return null;
  }
  const value = characters.indexOf(BACKSLASH) < 0 ? characters : unescapedUtf8(characters);
  if (value === null) {
    return null;
  }
  if (isAscii(value)) {
    // From OFF_HEAP_CHARS on, Node keeps a latin1 string outside V8's heap: no large object to avoid.
    return value.length >= OFF_HEAP_CHARS ? value.toString('latin1') : ropeOf(value, 'latin1');
  }
  return HAS_TRANSCODE ? ropeOf(transcode(value, 'utf8', 'utf16le'), 'utf16le') : value.toString('utf8');
}

/**
 * Pieces of a long value: below V8's largest regular object (128 KB), so each comes from the young
 * generation's pages, which V8 reuses. One string of the value's size would be a large object, in
 * pages V8 maps fresh for it and gives back at the next collection: hundreds of page faults a request
 * (docs/performance.md, "Large bodies stay bytes").
 */
const PIECE_BYTES = 64 * 1024;

/**
 * `bytes` decoded as one string made of pieces (a rope: joining them copies nothing, and nothing on
 * the request path reads a long value character by character). PIECE_BYTES is even: a UTF-16 piece
 * never splits a code unit.
 */
function ropeOf(bytes: Buffer, encoding: 'latin1' | 'utf16le'): string {
  let text = '';
  for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
    text += bytes.toString(encoding, at, Math.min(bytes.length, at + PIECE_BYTES));
  }
  return text;
}

const NOT_ESCAPABLE = -1;
/** What each character after a backslash stands for (`\u` aside), by its code. */
const ESCAPED = new Int32Array(128).fill(NOT_ESCAPABLE);
for (const [letter, byte] of Object.entries({
  '"': 0x22,
  '\\': 0x5c,
  '/': 0x2f,
  b: 0x08,
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
})) {
  ESCAPED[letter.charCodeAt(0)] = byte;
}
const U = 0x75;
const U_ESCAPE_BYTES = 6;
// Text between escapes shorter than this is looked through and copied byte by byte: a native search
// and copy cost more than that a call, and a string of nothing but escapes would pay them for each.
const SHORT_RUN_BYTES = 32;

/**
 * The UTF-8 of a JSON string's characters (between its quotes, without control characters) with its
 * escapes resolved, or null for an unknown or cut escape or a lone surrogate. No escape is shorter
 * than the UTF-8 it stands for, so the result fits in the characters' length.
 */
function unescapedUtf8(characters: Buffer): Buffer | null {
  const value = Buffer.allocUnsafe(characters.length);
  let written = 0;
  let read = 0;
  for (let escape = nextBackslash(characters, 0); escape >= 0; escape = nextBackslash(characters, read)) {
    if (escape - read < SHORT_RUN_BYTES) {
      while (read < escape) {
        value[written++] = characters[read++];
      }
    } else {
      written += characters.copy(value, written, read, escape);
    }
    const letter = escape + 1 < characters.length ? characters[escape + 1] : NOT_ESCAPABLE;
    if (letter !== U) {
      const byte = letter >= 0 && letter < 128 ? ESCAPED[letter] : NOT_ESCAPABLE;
      if (byte === NOT_ESCAPABLE) {
        return null;
      }
      value[written++] = byte;
      read = escape + 2;
      continue;
    }
    const code = escapedCodePoint(characters, escape);
    if (code === NOT_ESCAPABLE) {
      return null;
    }
    written += writeUtf8(value, written, code);
    read = escape + (code > 0xffff ? 2 * U_ESCAPE_BYTES : U_ESCAPE_BYTES);
  }
  written += characters.copy(value, written, read);
  return value.subarray(0, written);
}

/** The first backslash from `from`, or -1: looked for byte by byte nearby, natively past that. */
function nextBackslash(characters: Buffer, from: number): number {
  const near = Math.min(from + SHORT_RUN_BYTES, characters.length);
  for (let at = from; at < near; at++) {
    if (characters[at] === BACKSLASH) {
      return at;
    }
  }
  return near < characters.length ? characters.indexOf(BACKSLASH, near) : -1;
}

/** The code point of the `\u` escape at `at`, with the low half that must follow a high surrogate, or -1. */
function escapedCodePoint(characters: Buffer, at: number): number {
  const unit = hexUnit(characters, at);
  if (unit < 0xd800 || unit > 0xdfff) {
    return unit;
  }
  const low =
    unit <= 0xdbff && characters[at + U_ESCAPE_BYTES] === BACKSLASH && characters[at + U_ESCAPE_BYTES + 1] === U
      ? hexUnit(characters, at + U_ESCAPE_BYTES)
      : NOT_ESCAPABLE;
  return low >= 0xdc00 && low <= 0xdfff ? 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00) : NOT_ESCAPABLE;
}

/** The four hex digits of the `\u` escape at `at` as one unit, or -1. */
function hexUnit(characters: Buffer, at: number): number {
  if (at + U_ESCAPE_BYTES > characters.length) {
    return NOT_ESCAPABLE;
  }
  let code = 0;
  for (let digit = at + 2; digit < at + U_ESCAPE_BYTES; digit++) {
    const byte = characters[digit];
    const value =
      byte >= 0x30 && byte <= 0x39
        ? byte - 0x30
        : byte >= 0x41 && byte <= 0x46
          ? byte - 0x37
          : byte >= 0x61 && byte <= 0x66
            ? byte - 0x57
            : -1;
    if (value < 0) {
      return NOT_ESCAPABLE;
    }
    code = code * 16 + value;
  }
  return code;
}

/** Writes `code`, not a surrogate, as UTF-8 at `at`: how many bytes that took. */
function writeUtf8(target: Buffer, at: number, code: number): number {
  if (code < 0x80) {
    target[at] = code;
    return 1;
  }
  if (code < 0x800) {
    target[at] = 0xc0 | (code >> 6);
    target[at + 1] = 0x80 | (code & 0x3f);
    return 2;
  }
  if (code < 0x10000) {
    target[at] = 0xe0 | (code >> 12);
    target[at + 1] = 0x80 | ((code >> 6) & 0x3f);
    target[at + 2] = 0x80 | (code & 0x3f);
    return 3;
  }
  target[at] = 0xf0 | (code >> 18);
  target[at + 1] = 0x80 | ((code >> 12) & 0x3f);
  target[at + 2] = 0x80 | ((code >> 6) & 0x3f);
  target[at + 3] = 0x80 | (code & 0x3f);
  return 4;
}
