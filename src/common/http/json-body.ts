import { errorCodes, FastifyInstance } from 'fastify';
import { isAscii, isUtf8, transcode } from 'node:buffer';
import { HAS_TRANSCODE, parseAsciiJson, parseUtf8Json } from 'src/common/http/long-string-json';

type Json = Record<string, unknown>;
const hasOwn = (value: object, key: string) => Object.prototype.hasOwnProperty.call(value, key);
const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/**
 * Whether a parsed JSON value carries a `__proto__` key, or a `constructor` key holding `prototype`
 * anywhere: the shapes that poison an object they are later merged into. The check walks the parsed
 * value, so it costs per key and value rather than per byte of text; iterative, so nesting cannot
 * exhaust the stack.
 */
export function isPoisoned(root: unknown): boolean {
  return parsedObjectKeys(root) < 0;
}

/** The UTF-8 bytes a JSON object body was parsed from, and how many object keys the parsed value holds in all. */
export interface RawJsonBody {
  bytes: Buffer;
  keys: number;
}

// By the parsed body, for the request's life: the bytes as received, outside the JavaScript heap. The
// decoded text is dropped as soon as it is parsed, so a large prompt is not kept twice on the heap.
const rawBodies = new WeakMap<object, RawJsonBody>();

/**
 * The bytes `body` was parsed from, when it is a JSON object body as received in valid UTF-8. The body
 * must not have been changed since (the gateway never changes a body it relays: it builds a new one).
 */
export function rawJsonOf(body: object): RawJsonBody | undefined {
  return rawBodies.get(body);
}

/** Object keys in all of the parsed value (a key given twice in the text counts once), or -1 if it is poisoned. */
export function parsedObjectKeys(root: unknown): number {
  let keys = 0;
  const pending: object[] = isObject(root) ? [root] : [];
  for (let value = pending.pop(); value !== undefined; value = pending.pop()) {
    if (Array.isArray(value)) {
      for (const item of value as unknown[]) {
        if (isObject(item)) {
          pending.push(item);
        }
      }
      continue;
    }
    const object = value as Json;
    if (hasOwn(object, '__proto__')) {
      return -1;
    }
    if (hasOwn(object, 'constructor') && isObject(object.constructor) && hasOwn(object.constructor, 'prototype')) {
      return -1;
    }
    for (const key in object) {
      keys++;
      const child = object[key];
      if (isObject(child)) {
        pending.push(child);
      }
    }
  }
  return keys;
}

/**
 * Fastify's own JSON parser, with the same answers, but checking for prototype poisoning on the parsed
 * value instead of with two regular expressions over the raw text: on a 1 MB body (an image as a data
 * URI) those scans cost milliseconds of the event loop, the walk microseconds.
 */
export function parseJsonBodies(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser('application/json');
  // As bytes, decoded here: the bytes are what an OpenAI-compatible upstream gets (relayed-body.ts).
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    const received = body as Buffer;
    // A leading byte-order mark is accepted, as Fastify's parser accepts it.
    const bytes = hasByteOrderMark(received) ? received.subarray(BYTE_ORDER_MARK.length) : received;
    if (received.length === 0) {
      done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
      return;
    }
    // ASCII (the usual JSON body; an image's or audio's base64 always) decodes as latin1: a copy
    // rather than a UTF-8 decode, and a string of a megabyte or more, an image's, outside the heap.
    // In either, a long string (a prompt, an image) is decoded once, straight from the bytes
    // (long-string-json.ts; docs/performance.md, "Large bodies stay bytes").
    const ascii = isAscii(bytes);
    const utf8 = ascii || isUtf8(bytes);
    let parsed: unknown;
    try {
      parsed = ascii
        ? parseAsciiJson(bytes)
        : utf8
          ? parseUtf8Json(bytes, decodeValidUtf8)
          : JSON.parse(bytes.toString('utf8'));
    } catch {
      done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
      return;
    }
    const keys = parsedObjectKeys(parsed);
    if (keys < 0) {
      done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
      return;
    }
    // Invalid UTF-8 was read with replacement characters: relaying its bytes would give the upstream
    // something else than what was validated and billed, so such a body is re-serialised instead.
    if (isObject(parsed) && !Array.isArray(parsed) && utf8) {
      // An OpenAI-compatible upstream gets these bytes, with the model spliced in, instead of a re-serialisation.
      rawBodies.set(parsed, { bytes, keys });
    }
    done(null, parsed);
  });
}

/** From this size on, valid UTF-8 is decoded through UTF-16 (decodeValidUtf8). */
export const TRANSCODED_BYTES = 2 * 1024;

/**
 * The text of `bytes`, valid UTF-8. V8 decodes UTF-8 a byte at a time, twice (once to size the
 * string): about 4 ms a megabyte of prose with a little text outside ASCII. From a few kilobytes on
 * it is converted to UTF-16 by Node's `transcode` (SIMD code) instead, and the string copies that: a
 * third of the time at 256 KB, a seventh at 64 KB, the same characters (docs/performance.md, "Large
 * bodies stay bytes"). Invalid UTF-8 keeps V8's decoder, whose replacement characters the gateway expects.
 */
function decodeValidUtf8(bytes: Buffer): string {
  return bytes.length >= TRANSCODED_BYTES && HAS_TRANSCODE
    ? transcode(bytes, 'utf8', 'utf16le').toString('utf16le')
    : bytes.toString('utf8');
}

const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);

function hasByteOrderMark(bytes: Buffer): boolean {
  return BYTE_ORDER_MARK.equals(bytes.subarray(0, BYTE_ORDER_MARK.length));
}
