import { KeyObject, sign, verify } from 'node:crypto';

/**
 * Alipay's RSA2 scheme: SHA256withRSA (PKCS#1 v1.5), base64, over a canonical string of the parameters.
 * Shared by our requests, Alipay's notifications and the fake wallet that plays Alipay in tests.
 */

/**
 * The string Alipay signs: the parameters with a non-empty value, except `excluded`, sorted by key
 * (ASCII), written `key=value` joined by `&`, values as they are (never URL-encoded).
 */
export function alipaySigningString(params: Record<string, string>, excluded: readonly string[]): string {
  return Object.keys(params)
    .filter((key) => !excluded.includes(key) && params[key] !== '')
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&');
}

export function signRsa2(content: string, privateKey: KeyObject): string {
  return sign('sha256', Buffer.from(content, 'utf8'), privateKey).toString('base64');
}

/** False for any signature that does not verify, malformed ones included: a signature is never an error. */
export function verifyRsa2(content: string, signature: string, publicKey: KeyObject): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) {
    return false;
  }
  try {
    return verify('sha256', Buffer.from(content, 'utf8'), publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

const SPACE = ' \t\r\n';

function skipSpace(text: string, index: number): number {
  let at = index;
  while (at < text.length && SPACE.includes(text[at])) {
    at++;
  }
  return at;
}

/** The index just past the JSON string that opens at `start`, or -1. */
function endOfString(text: string, start: number): number {
  let at = start + 1;
  while (at < text.length) {
    if (text[at] === '\\') {
      at += 2;
    } else if (text[at] === '"') {
      return at + 1;
    } else {
      at++;
    }
  }
  return -1;
}

/** The index just past the JSON value that starts at `start`, or -1. */
function endOfValue(text: string, start: number): number {
  if (text[start] === '"') {
    return endOfString(text, start);
  }
  if (text[start] !== '{' && text[start] !== '[') {
    // A number, true, false or null runs until the next delimiter.
    let at = start;
    while (at < text.length && !',}]'.includes(text[at]) && !SPACE.includes(text[at])) {
      at++;
    }
    return at > start ? at : -1;
  }
  let depth = 0;
  for (let at = start; at < text.length;) {
    const char = text[at];
    if (char === '"') {
      at = endOfString(text, at);
      if (at < 0) {
        return -1;
      }
      continue;
    }
    if (char === '{' || char === '[') {
      depth++;
    } else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) {
        return at + 1;
      }
    }
    at++;
  }
  return -1;
}

function keyAt(text: string, start: number, end: number): string | null {
  try {
    return JSON.parse(text.slice(start, end)) as string;
  } catch {
    return null;
  }
}

/**
 * The exact text of member `key` of the JSON object `body` (top level only), as it appears in the body.
 * Alipay signs that text, not a value: re-serializing would change escapes (`\/`) and spacing. Null when
 * the body is not one whole object or has no such member.
 */
export function rawMemberText(body: string, key: string): string | null {
  let at = skipSpace(body, 0);
  if (body[at] !== '{') {
    return null;
  }
  let found: string | null = null;
  at = skipSpace(body, at + 1);
  while (body[at] === '"') {
    const keyEnd = endOfString(body, at);
    const name = keyEnd < 0 ? null : keyAt(body, at, keyEnd);
    if (name === null) {
      return null;
    }
    at = skipSpace(body, keyEnd);
    if (body[at] !== ':') {
      return null;
    }
    const valueStart = skipSpace(body, at + 1);
    const valueEnd = endOfValue(body, valueStart);
    if (valueEnd < 0) {
      return null;
    }
    // The first of repeated members, as the signer wrote it; the caller reads the value from this text.
    found ??= name === key ? body.slice(valueStart, valueEnd) : null;
    at = skipSpace(body, valueEnd);
    if (body[at] !== ',') {
      break;
    }
    at = skipSpace(body, at + 1);
  }
  const whole = body[at] === '}' && skipSpace(body, at + 1) === body.length;
  return whole ? found : null;
}
