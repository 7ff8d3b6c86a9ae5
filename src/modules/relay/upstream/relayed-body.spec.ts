import { parsedObjectKeys, RawJsonBody } from 'src/common/http/json-body';
import { RelayedBytes, scanJsonObject, splicedBody } from 'src/modules/relay/upstream/relayed-body';
import { SeededRandom } from 'test/support/seeded-random';

/** What the body parser keeps for a text it accepted. */
function raw(text: string): RawJsonBody {
  return { bytes: Buffer.from(text), keys: parsedObjectKeys(JSON.parse(text)) };
}

/** What the upstream must read: the parsed body with the model (and stream options) set, as before splicing. */
function expected(text: string, model: string, streamOptions: Record<string, unknown> | null): unknown {
  const body = JSON.parse(text) as Record<string, unknown>;
  return { ...body, model, ...(streamOptions ? { stream_options: streamOptions } : {}) };
}

const bytesOf = (relayed: RelayedBytes) => (Buffer.isBuffer(relayed) ? relayed : Buffer.concat(relayed));

function expectSpliced(text: string, model: string, streamOptions: Record<string, unknown> | null = null): string {
  const spliced = splicedBody(raw(text), model, streamOptions);
  expect(spliced).not.toBeNull();
  const payload = bytesOf(spliced!).toString('utf8');
  expect(JSON.parse(payload)).toEqual(expected(text, model, streamOptions));
  // Key order as the re-serialisation had it, and no key twice: any parser reads the same.
  expect(Object.keys(JSON.parse(payload) as object)).toEqual(
    Object.keys(expected(text, model, streamOptions) as object),
  );
  expect(scanJsonObject(Buffer.from(payload))?.keys).toBe(parsedObjectKeys(JSON.parse(payload)));
  return payload;
}

const USAGE = { include_usage: true };

describe(splicedBody.name, () => {
  it('should relay the client bytes around the model value', () => {
    const text = '{"model":"ours","messages":[{"role":"user","content":"Hi"}],"max_tokens":5}';
    expect(expectSpliced(text, 'theirs')).toBe(
      '{"model":"theirs","messages":[{"role":"user","content":"Hi"}],"max_tokens":5}',
    );
  });

  it.each([
    [
      'escaped quotes and backslashes in strings',
      String.raw`{"messages":[{"role":"user","content":"say \"model\": \"x\", \\"}],"model":"m"}`,
    ],
    [
      'a string ending in escaped backslashes',
      String.raw`{"messages":[{"role":"user","content":"C:\\dir\\"}],"model":"m","n":1}`,
    ],
    ['a unicode-escaped key', String.raw`{"mod\u0065l":"m","messages":[]}`],
    [
      'unicode escapes in values',
      String.raw`{"model":"\u006d","messages":[{"role":"user","content":"\ud83d\ude00 \u0022"}]}`,
    ],
    [
      'a nested model key',
      '{"metadata":{"model":"inner"},"messages":[{"role":"user","content":"x","model":"y"}],"model":"m"}',
    ],
    ['whitespace everywhere', '\n {\n\t"model" :\r\n "m" ,\n "messages" : [ ] , "temperature" : 0.5 \n}\n '],
    ['the model last', '{"messages":[],"stream":false,"model":"m"}'],
    ['the model alone', '{"model":"m"}'],
    ['numbers, literals and nesting', '{"a":[1,-2.5e3,true,false,null,{"b":[[]]}],"model":"m","c":{}}'],
    ['non-ASCII text', '{"model":"m","messages":[{"role":"user","content":"東京 café 😀"}]}'],
  ])('should splice %s', (_name, text) => {
    expectSpliced(text, 'up-stream/model "quoted"');
  });

  it.each([
    ['absent', '{"model":"m","stream":true}'],
    ['null', '{"model":"m","stream":true,"stream_options":null}'],
    ['an object without include_usage', '{"model":"m","stream":true,"stream_options":{"other":1}}'],
    ['an object asking for no usage', '{"stream_options": {"include_usage": false} ,"model":"m","stream":true}'],
    ['not an object', '{"model":"m","stream":true,"stream_options":"x"}'],
  ])('should set stream_options when it is %s', (_name, text) => {
    const body = JSON.parse(text) as { stream_options?: unknown };
    const options = {
      ...(typeof body.stream_options === 'object' && body.stream_options !== null ? body.stream_options : {}),
      ...USAGE,
    };
    expectSpliced(text, 'up', options);
  });

  it.each([
    ['a top-level key twice', '{"model":"a","messages":[],"model":"b"}'],
    ['the model twice, once escaped', String.raw`{"model":"a","mod\u0065l":"b"}`],
    ['stream_options twice', '{"model":"m","stream_options":null,"stream_options":{"include_usage":false}}'],
    ['a nested key twice', '{"model":"m","messages":[{"role":"user","content":"short","content":"a long prompt"}]}'],
    ['a deeply nested key twice', '{"model":"m","tools":[{"function":{"parameters":{"a":1,"a":2}}}]}'],
  ])('should refuse %s, which another parser could read otherwise', (_name, text) => {
    expect(splicedBody(raw(text), 'up', USAGE)).toBeNull();
    expect(splicedBody(raw(text), 'up', null)).toBeNull();
  });

  it('should send top-level numbers as JSON.stringify writes them, and nested ones as written', () => {
    const text = '{"model":"m","max_tokens":2.0,"n":1E0,"seed":-3.0,"temperature":0.50,"tools":[{"minimum":1.0}]}';

    const payload = expectSpliced(text, 'up');

    expect(payload).toBe('{"model":"up","max_tokens":2,"n":1,"seed":-3,"temperature":0.5,"tools":[{"minimum":1.0}]}');
  });

  it("should send a large body as slices of the client's bytes, not a copy of them", () => {
    const prompt = 'x'.repeat(100 * 1024);
    const client = raw(`{"model":"ours","messages":[{"role":"user","content":"${prompt}"}]}`);

    const spliced = splicedBody(client, 'theirs', USAGE);

    expect(Array.isArray(spliced)).toBe(true);
    const slices = spliced as readonly Buffer[];
    expect(slices.find((slice) => slice.length > prompt.length)?.buffer).toBe(client.bytes.buffer);
    expect(JSON.parse(bytesOf(slices).toString())).toEqual({
      model: 'theirs',
      messages: [{ role: 'user', content: prompt }],
      stream_options: USAGE,
    });
  });

  it('should refuse a body without a top-level model', () => {
    expect(splicedBody(raw('{"metadata":{"model":"m"}}'), 'up', null)).toBeNull();
  });

  it('should relay whatever random body JSON.stringify would relay, meaning the same', () => {
    const random = new SeededRandom(4242);
    const strings = ['', 'model', '"', '\\', '\\"', 'a\nb', '東京', '😀', '{', '}', ',', ':', '[', ']', ' '];
    const value = (depth: number): unknown => {
      const roll = random.int(0, depth > 3 ? 3 : 6);
      if (roll === 0) {
        return random.pick(strings) + random.pick(strings);
      }
      if (roll === 1) {
        return random.int(-1000, 1000) / 8;
      }
      if (roll === 2) {
        return random.pick([true, false, null]);
      }
      if (roll === 3) {
        return random.pick(strings);
      }
      if (roll === 4) {
        return Array.from({ length: random.int(0, 4) }, () => value(depth + 1));
      }
      const object: Record<string, unknown> = {};
      for (let index = random.int(0, 4); index > 0; index--) {
        object[random.pick(strings) + random.pick(['model', 'x', 'stream_options', ''])] = value(depth + 1);
      }
      return object;
    };
    const space = () => random.pick(['', '', ' ', '\n', '\t ', '\r\n  ']);
    // JSON text with random whitespace between tokens, and some characters written as \u escapes.
    const write = (item: unknown): string => {
      if (Array.isArray(item)) {
        return `[${space()}${item.map((x) => write(x)).join(`${space()},${space()}`)}${space()}]`;
      }
      if (typeof item === 'object' && item !== null) {
        const members = Object.entries(item).map(([k, v]) => `${writeString(k)}${space()}:${space()}${write(v)}`);
        return `{${space()}${members.join(`${space()},${space()}`)}${space()}}`;
      }
      return typeof item === 'string' ? writeString(item) : JSON.stringify(item);
    };
    const writeString = (text: string) =>
      random.next() < 0.3
        ? `"${[...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`
        : JSON.stringify(text);
    for (let round = 0; round < 500; round++) {
      const body = value(1) as Record<string, unknown>;
      const members = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : { other: body };
      const withModel = { ...members, model: random.pick(['ours', 'a"b']) };
      const text = `${space()}${write(withModel)}${space()}`;
      const stream = random.next() < 0.5 ? { ...USAGE } : null;
      expectSpliced(text, random.pick(['theirs', 'x\\y', '']), stream);
    }
  });
});
