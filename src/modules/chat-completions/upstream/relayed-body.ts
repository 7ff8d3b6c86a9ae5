import { RawJsonBody } from 'src/common/http/json-body';

/*
 * The body an OpenAI-compatible upstream gets: the client's own text, with the model's value (and a
 * stream's `stream_options`) spliced in, instead of a JSON.stringify of the parsed body — on a prompt
 * of megabytes that re-serialisation and its garbage were a tenth of the gateway's work.
 *
 * The upstream must read exactly what was validated and billed. JSON.parse keeps the last of a key
 * given twice; another parser may keep the first. So the text is relayed only when no object in it
 * has a key twice: the scan counts the keys of every object in the text, and the parsed body must
 * hold as many (json-body.ts counts them while it checks the body). Otherwise, or when the text has
 * no top-level `model` to splice, the caller re-serialises.
 *
 * Top-level numbers (the fields validated as integers: `max_tokens`, `n`, `seed`, …) go out as
 * JSON.stringify writes them: validation reads `2.0` or `1e2` as the integer it is, and an upstream
 * strict about integers must get `2` and `100`. Numbers inside values (a tool's schema) are the
 * client's own and go as written.
 */

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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
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
): string | null {
  const scanned = scanJsonObject(raw.text);
  // A key twice in some object: the upstream could read a value other than the one validated.
  if (!scanned || scanned.keys !== raw.keys) {
    return null;
  }
  const model = scanned.topLevel.get('model');
  if (!model) {
    return null;
  }
  const edits: Edit[] = [{ ...model, text: JSON.stringify(upstreamModel) }, ...numberEdits(raw.text, scanned)];
  if (streamOptions) {
    const value = JSON.stringify(streamOptions);
    const present = scanned.topLevel.get('stream_options');
    edits.push(
      present
        ? { ...present, text: value }
        : { start: scanned.close, end: scanned.close, text: `,"stream_options":${value}` },
    );
  }
  return applyEdits(raw.text, edits);
}

/** The top-level numbers not written as JSON.stringify would write them, rewritten so. */
function numberEdits(text: string, scanned: ScannedObject): Edit[] {
  const edits: Edit[] = [];
  for (const range of scanned.topLevel.values()) {
    const first = text.charCodeAt(range.start);
    if (first === MINUS || (first >= DIGIT_0 && first <= DIGIT_9)) {
      const written = text.slice(range.start, range.end);
      const canonical = JSON.stringify(Number(written));
      if (canonical !== written) {
        edits.push({ ...range, text: canonical });
      }
    }
  }
  return edits;
}

function applyEdits(text: string, edits: Edit[]): string {
  edits.sort((a, b) => a.start - b.start);
  let result = '';
  let at = 0;
  for (const edit of edits) {
    result += text.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return result + text.slice(at);
}

/**
 * One tokenizing pass over JSON text that JSON.parse accepted, whose value is an object: strings
 * are skipped by searching for their closing quote, everything else is looked at once. Null if the
 * text is not an object.
 */
export function scanJsonObject(text: string): ScannedObject | null {
  let at = skipSpace(text, 0);
  if (text.charCodeAt(at) !== OPEN_BRACE) {
    return null;
  }
  const topLevel = new Map<string, ValueRange>();
  let keys = 0;
  let depth = 0;
  let key: string | null = null;
  let valueStart = -1;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      if (end < 0) {
        return null;
      }
      const after = skipSpace(text, end);
      if (text.charCodeAt(after) !== COLON) {
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

/** Just past the string starting at the quote at `start`, or -1 if it never closes. */
function stringEnd(text: string, start: number): number {
  for (let from = start + 1; ;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) {
      return -1;
    }
    // Escaped when an odd number of backslashes precede it (the opening quote stops the count).
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) {
      backslashes++;
    }
    if (backslashes % 2 === 0) {
      return quote + 1;
    }
    from = quote + 1;
  }
}

/** A key as JSON.parse reads it: `"mod\u0065l"` is `model`. */
function keyName(text: string, start: number, end: number): string {
  const inner = text.slice(start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : inner;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function skipSpace(text: string, from: number): number {
  let at = from;
  while (at < text.length && isSpace(text.charCodeAt(at))) {
    at++;
  }
  return at;
}

function trimEnd(text: string, start: number, end: number): number {
  let at = end;
  while (at > start && isSpace(text.charCodeAt(at - 1))) {
    at--;
  }
  return at;
}
