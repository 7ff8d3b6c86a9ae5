import { COLON, isSpace, QUOTE, skipSpace, stringEnd } from 'src/common/http/json-bytes';
import { RawJsonBody } from 'src/common/http/json-body';

/*
 * The body an OpenAI-compatible upstream gets: the client's own bytes, with the model's value (and a
 * stream's `stream_options`) spliced in, instead of a JSON.stringify of the parsed body — on a prompt
 * of megabytes that re-serialisation and its garbage were a tenth of the gateway's work. Bytes, not
 * text: they stay outside the JavaScript heap while the request is in flight, and undici sends them
 * without encoding a string of the body's size again.
 *
 * The upstream must read exactly what was validated and billed. JSON.parse keeps the last of a key
 * given twice; another parser may keep the first. So the bytes are relayed only when no object in
 * them has a key twice: the scan counts the keys of every object, and the parsed body must hold as
 * many (json-body.ts counts them while it checks the body). They must also be valid UTF-8, or the
 * upstream would not decode them as the body was decoded (json-body.ts keeps no bytes otherwise).
 * Otherwise, or when the body has no top-level `model` to splice, the caller re-serialises. The scan
 * reads bytes (json-bytes.ts).
 *
 * Top-level numbers (the fields validated as integers: `max_tokens`, `n`, `seed`, …) go out as
 * JSON.stringify writes them: validation reads `2.0` or `1e2` as the integer it is, and an upstream
 * strict about integers must get `2` and `100`. Numbers inside values (a tool's schema) are the
 * client's own and go as written.
 */

/** The bytes an upstream is sent: one buffer, or in order the slices of the client's bytes and the edits between them. */
export type RelayedBytes = Buffer | readonly Buffer[];

// From this size on the body goes upstream as slices of the client's bytes and the edits between
// them (written one after the other to the socket), not as one copy: a copy is a fresh allocation of
// the body's size, whose pages cost faults, and which brings the next full collection closer
// (docs/performance.md, "Large bodies stay bytes"). Below it, one buffer is one write.
const SLICED_FROM_BYTES = 64 * 1024;

interface ValueRange {
  start: number;
  end: number;
}

interface ScannedObject {
  /** Keys of every object in the text, nested ones included, each occurrence counted. */
  keys: number;
  /** Where each top-level key's value lies. */
  topLevel: Map<string, ValueRange>;
  /** The top-level object's closing brace. */
  close: number;
}

interface Edit extends ValueRange {
  text: string;
}

const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/**
 * The upstream payload: `raw`'s text with the top-level `model` set to `upstreamModel` and, when
 * given, `stream_options` set to `streamOptions` (appended when absent); null when it is not safe.
 */
export function splicedBody(
  raw: RawJsonBody,
  upstreamModel: string,
  streamOptions: Record<string, unknown> | null,
): RelayedBytes | null {
  const scanned = scanJsonObject(raw.bytes);
  // A key twice in some object: the upstream could read a value other than the one validated.
  if (!scanned || scanned.keys !== raw.keys) {
    return null;
  }
  const model = scanned.topLevel.get('model');
  if (!model) {
    return null;
  }
  const edits: Edit[] = [replaced(model, JSON.stringify(upstreamModel)), ...numberEdits(raw.bytes, scanned)];
  if (streamOptions) {
    const value = JSON.stringify(streamOptions);
    const present = scanned.topLevel.get('stream_options');
    edits.push(
      present
        ? replaced(present, value)
        : { start: scanned.close, end: scanned.close, text: `,"stream_options":${value}` },
    );
  }
  return applyEdits(raw.bytes, edits);
}

/** The top-level numbers not written as JSON.stringify would write them, rewritten so. */
function numberEdits(bytes: Buffer, scanned: ScannedObject): Edit[] {
  const edits: Edit[] = [];
  for (const range of scanned.topLevel.values()) {
    const first = bytes[range.start];
    if (first === MINUS || (first >= DIGIT_0 && first <= DIGIT_9)) {
      const written = bytes.toString('latin1', range.start, range.end);
      const canonical = JSON.stringify(Number(written));
      if (canonical !== written) {
        edits.push(replaced(range, canonical));
      }
    }
  }
  return edits;
}

/** `range` replaced by `text`. Built field by field: a literal spreading `range` cost a microsecond on Node 20. */
function replaced(range: ValueRange, text: string): Edit {
  return { start: range.start, end: range.end, text };
}

function applyEdits(bytes: Buffer, edits: Edit[]): RelayedBytes {
  edits.sort((a, b) => a.start - b.start);
  const parts: Buffer[] = [];
  let at = 0;
  for (const edit of edits) {
    parts.push(bytes.subarray(at, edit.start), Buffer.from(edit.text));
    at = edit.end;
  }
  parts.push(bytes.subarray(at));
  return bytes.length < SLICED_FROM_BYTES ? Buffer.concat(parts) : parts;
}

/**
 * One tokenizing pass over the UTF-8 bytes of JSON text that JSON.parse accepted, whose value is an
 * object: strings are skipped by searching for their closing quote, everything else is looked at once.
 * Null if the text is not an object.
 */
export function scanJsonObject(text: Buffer): ScannedObject | null {
  let at = skipSpace(text, 0);
  if (text[at] !== OPEN_BRACE) {
    return null;
  }
  const topLevel = new Map<string, ValueRange>();
  let keys = 0;
  let depth = 0;
  let key: string | null = null;
  let valueStart = -1;
  while (at < text.length) {
    const code = text[at];
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      if (end < 0) {
        return null;
      }
      const after = skipSpace(text, end);
      if (text[after] !== COLON) {
        at = end;
        continue;
      }
      keys++;
      if (depth === 1) {
        key = keyName(text, at, end);
        valueStart = skipSpace(text, after + 1);
        at = valueStart;
      } else {
        at = after + 1;
      }
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) {
        if (key !== null) {
          topLevel.set(key, { start: valueStart, end: trimEnd(text, valueStart, at) });
        }
        return { keys, topLevel, close: at };
      }
    } else if (code === COMMA && depth === 1 && key !== null) {
      topLevel.set(key, { start: valueStart, end: trimEnd(text, valueStart, at) });
      key = null;
    }
    at++;
  }
  return null;
}

/** A key as JSON.parse reads it: `"mod\u0065l"` is `model`. */
function keyName(text: Buffer, start: number, end: number): string {
  const inner = text.toString('utf8', start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(text.toString('utf8', start, end)) as string) : inner;
}

function trimEnd(text: Buffer, start: number, end: number): number {
  let at = end;
  while (at > start && isSpace(text[at - 1])) {
    at--;
  }
  return at;
}
