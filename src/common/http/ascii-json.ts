import { randomBytes } from 'node:crypto';
import { BACKSLASH, COLON, QUOTE, skipSpace, stringEnd } from 'src/common/http/json-bytes';

/*
 * An image sent as a data URI is one JSON string of hundreds of kilobytes to megabytes. JSON.parse
 * reads it a character at a time, after the whole body was decoded into a string of its size, then
 * copies it onto the V8 heap again. Such a string (base64: no escapes) is instead cut out of the text
 * JSON.parse reads, and decoded by Node straight from the body's bytes: a copy. From OFF_HEAP_CHARS
 * characters on Node keeps it outside the V8 heap too. V8 still counts it, as it counts the body's
 * buffers, towards the next full collection until one frees it (api-runtime.ts).
 */

/** The length from which Node decodes latin1 into a string outside the V8 heap (its `EXTERN_APEX`). */
export const OFF_HEAP_CHARS = 0xfbee9;
/** Strings from this length on are decoded on their own; shorter ones cost JSON.parse little. */
export const LONG_STRING_CHARS = 64 * 1024;
/** A body with more strings than this is parsed whole: looking for long ones would cost more than it saves. */
const MAX_SCANNED_STRINGS = 10_000;
// What a long string is replaced by in the parsed text, numbered. Random, so that a client cannot
// send it; and each must be found exactly once in the parsed value, or the body is parsed whole.
const HOLE = `long-string-${randomBytes(8).toString('hex')}-`;
// JSON forbids these in a string unescaped; JSON.parse would have rejected a long string holding one.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\x00-\x1f]/;

interface StringSpan {
  /** The opening quote. */
  start: number;
  /** Just past the closing quote. */
  end: number;
}

/** JSON.parse of `bytes`, which are all ASCII, with its long strings decoded on their own. */
export function parseAsciiJson(bytes: Buffer): unknown {
  const long = bytes.length > LONG_STRING_CHARS ? longStrings(bytes) : [];
  if (long.length > 0) {
    const parsed = JSON.parse(holedText(bytes, long)) as unknown;
    if (fillHoles(parsed, bytes, long)) {
      return parsed;
    }
  }
  return JSON.parse(bytes.toString('latin1'));
}

/**
 * The string values of LONG_STRING_CHARS or more without an escape, in order. The bytes are read as
 * JSON.parse's lexer reads them: outside a string a quote opens one, inside it the next unescaped
 * quote closes it. None when the text has too many strings or an unclosed one (it is parsed whole).
 */
function longStrings(bytes: Buffer): StringSpan[] {
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
    const isLongValue =
      end - start - 2 >= LONG_STRING_CHARS &&
      bytes[skipSpace(bytes, end)] !== COLON &&
      bytes.subarray(start + 1, end - 1).indexOf(BACKSLASH) < 0;
    if (isLongValue) {
      spans.push({ start, end });
    }
    at = end;
  }
  return [];
}

/** The text with each long string's characters replaced by its numbered hole. */
function holedText(bytes: Buffer, long: StringSpan[]): string {
  let text = '';
  let at = 0;
  long.forEach((span, index) => {
    text += bytes.toString('latin1', at, span.start + 1) + HOLE + index;
    at = span.end - 1;
  });
  return text + bytes.toString('latin1', at);
}

/**
 * Puts each long string in its hole, decoded from the bytes. False when a hole is not found exactly
 * once (the client sent one) or a long string holds a control character (the text is not JSON).
 */
function fillHoles(parsed: unknown, bytes: Buffer, long: StringSpan[]): boolean {
  const filled = new Uint8Array(long.length);
  const fill = (hole: string): string | null => {
    const index = Number(hole.slice(HOLE.length));
    const span = long[index];
    if (span === undefined || filled[index] === 1) {
      return null;
    }
    filled[index] = 1;
    const text = bytes.toString('latin1', span.start + 1, span.end - 1);
    return CONTROL_CHARACTER.test(text) ? null : text;
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
