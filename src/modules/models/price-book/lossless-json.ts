/** A JSON number as written: its literal text, never converted to a float. */
export class JsonNumber {
  constructor(readonly literal: string) {}
}

export type LosslessJson = null | boolean | string | JsonNumber | LosslessJson[] | Map<string, LosslessJson>;

const MAX_DEPTH = 32;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
// Up to the closing quote; JSON.parse of the whole literal then checks its escapes and control characters.
const STRING_BODY = /(?:[^"\\]|\\.)*"/y;

/**
 * Parses JSON text keeping every number's literal. `JSON.parse` turns `1.5e-7` into the nearest
 * binary float, whose text (`String(x)`) is the literal only up to 15 significant digits; Node 20's
 * `JSON.parse` reviver cannot see the source text. Prices are read from the literal, exactly.
 * Objects are Maps, so no key (`__proto__`) is special. Throws SyntaxError on invalid JSON.
 */
export function parseLosslessJson(text: string): LosslessJson {
  let at = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${at}`);
  };
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(text);
    at = WHITESPACE.lastIndex;
  };
  const string = (): string => {
    STRING_BODY.lastIndex = at + 1;
    if (!STRING_BODY.exec(text)) {
      fail('invalid string');
    }
    const literal = text.slice(at, STRING_BODY.lastIndex);
    at = STRING_BODY.lastIndex;
    return JSON.parse(literal) as string;
  };
  const value = (depth: number): LosslessJson => {
    if (depth > MAX_DEPTH) {
      fail(`nested deeper than ${MAX_DEPTH}`);
    }
    skip();
    const char = text[at];
    if (char === '{') {
      at++;
      const object = new Map<string, LosslessJson>();
      skip();
      if (text[at] === '}') {
        at++;
        return object;
      }
      for (;;) {
        skip();
        if (text[at] !== '"') {
          fail('expected a key');
        }
        const key = string();
        skip();
        if (text[at++] !== ':') {
          fail('expected ":"');
        }
        object.set(key, value(depth + 1));
        skip();
        const next = text[at++];
        if (next === '}') {
          return object;
        }
        if (next !== ',') {
          fail('expected "," or "}"');
        }
      }
    }
    if (char === '[') {
      at++;
      const array: LosslessJson[] = [];
      skip();
      if (text[at] === ']') {
        at++;
        return array;
      }
      for (;;) {
        array.push(value(depth + 1));
        skip();
        const next = text[at++];
        if (next === ']') {
          return array;
        }
        if (next !== ',') {
          fail('expected "," or "]"');
        }
      }
    }
    if (char === '"') {
      return string();
    }
    for (const [word, meaning] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return meaning;
      }
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (!number) {
      fail('unexpected character');
    }
    at = NUMBER.lastIndex;
    return new JsonNumber(number![0]);
  };
  const result = value(0);
  skip();
  if (at !== text.length) {
    fail('unexpected text after the value');
  }
  return result;
}
