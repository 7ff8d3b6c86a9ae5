import Fastify, { FastifyInstance } from 'fastify';
import { isPoisoned, parseJsonBodies, RawJsonBody, rawJsonOf, TRANSCODED_BYTES } from 'src/common/http/json-body';
import { LONG_UTF8_STRING_BYTES } from 'src/common/http/long-string-json';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

describe(isPoisoned.name, () => {
  it.each([
    ['a __proto__ key at the top', '{"__proto__": {"admin": true}}'],
    ['a __proto__ key deep in an array', '{"messages": [{"content": [{"__proto__": {"x": 1}}]}]}'],
    ['a constructor holding a prototype', '{"a": {"constructor": {"prototype": {"polluted": true}}}}'],
    ['an escaped __proto__ key', '{"\\u005f_proto__": 1}'],
  ])('should find %s', (_name, text) => {
    expect(isPoisoned(JSON.parse(text))).toBe(true);
  });

  it.each([
    ['an ordinary chat body', '{"model": "m", "messages": [{"role": "user", "content": "__proto__ constructor"}]}'],
    ['a constructor key without a prototype', '{"constructor": {"name": "x"}, "prototype": 1}'],
    ['a scalar', '42'],
    ['null', 'null'],
  ])('should accept %s', (_name, text) => {
    expect(isPoisoned(JSON.parse(text))).toBe(false);
  });

  it('should walk a million-element array without exhausting the stack', () => {
    const huge = JSON.parse(`[${'{"a":[1]},'.repeat(1_000_000)}{"__proto__":1}]`) as unknown;
    expect(isPoisoned(huge)).toBe(true);
  });
});

describe(parseJsonBodies.name, () => {
  let app: FastifyInstance;
  let received: { body: unknown; raw: RawJsonBody | undefined };

  beforeAll(async () => {
    app = Fastify({ bodyLimit: 8 * 1024 * 1024 });
    parseJsonBodies(app);
    app.post('/', (request, reply) => {
      received = { body: request.body, raw: rawJsonOf(request.body as object) };
      return reply.send({});
    });
    await app.ready();
  });
  afterAll(() => app.close());

  const post = (payload: Buffer) =>
    app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload });

  it('should parse a body of ASCII over a megabyte, an image as a data URI, and keep its bytes', async () => {
    const url = `data:image/png;base64,${'iVBORw0KGgo+/'.repeat(120_000)}=`;
    const bytes = Buffer.from(JSON.stringify({ messages: [{ content: [{ image_url: { url } }] }] }));

    expect((await post(bytes)).statusCode).toBe(200);
    expect(received.body).toEqual({ messages: [{ content: [{ image_url: { url } }] }] });
    expect(received.raw?.bytes.equals(bytes)).toBe(true);
  });

  it('should read text outside ASCII as UTF-8, in a large body as in a small one', async () => {
    for (const filler of ['', 'x'.repeat(1_200_000)]) {
      const content = `東京 café 😀 ${filler}`;
      const bytes = Buffer.from(JSON.stringify({ content, escaped: 'caf\\u00e9' }));

      expect((await post(bytes)).statusCode).toBe(200);
      expect(received.body).toEqual({ content, escaped: 'caf\\u00e9' });
      expect(received.raw?.bytes.equals(bytes)).toBe(true);
    }
  });

  it('should decode kilobytes of text outside ASCII as Node does: four-byte characters, a mid-text BOM, escapes', async () => {
    const content = `\uFEFFΑθήνα — 東京 😀🇯🇵 \u0000 "quoted" \\ tab\t é`.repeat(400);
    const bytes = Buffer.concat([BOM, Buffer.from(JSON.stringify({ messages: [{ content }], tail: 'ü' }))]);

    expect(bytes.length).toBeGreaterThan(TRANSCODED_BYTES * 4);
    expect((await post(bytes)).statusCode).toBe(200);
    expect(received.body).toEqual(JSON.parse(bytes.subarray(BOM.length).toString('utf8')));
    expect(received.raw?.bytes.equals(bytes.subarray(BOM.length))).toBe(true);
  });

  it('should parse a prompt of hundreds of kilobytes outside ASCII, escapes and all, and keep its bytes', async () => {
    const content = 'Ωραία — 東京 😀 "quoted"\nline\ttab \\ /'.repeat(8_000);
    const bytes = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content }], user: 'ü' }));

    expect(bytes.length).toBeGreaterThan(LONG_UTF8_STRING_BYTES * 2);
    expect((await post(bytes)).statusCode).toBe(200);
    expect(received.body).toEqual({ model: 'm', messages: [{ role: 'user', content }], user: 'ü' });
    expect(received.raw?.bytes.equals(bytes)).toBe(true);
  });

  it('should answer 400 to a long prompt holding a raw control character, as to a short one', async () => {
    const bytes = Buffer.from(`{"content":"${'東京 '.repeat(LONG_UTF8_STRING_BYTES / 4)}\u0007"}`);

    expect((await post(bytes)).statusCode).toBe(400);
  });

  it('should read invalid UTF-8 with replacement characters, and keep no bytes to relay', async () => {
    const bytes = Buffer.concat([Buffer.from('{"content":"a'), Buffer.from([0xff]), Buffer.from('b"}')]);

    expect((await post(bytes)).statusCode).toBe(200);
    expect(received.body).toEqual({ content: 'a\uFFFDb' });
    expect(received.raw).toBeUndefined();
  });

  it('should read a large body with invalid UTF-8 as a small one', async () => {
    const text = '東京 café '.repeat(1_000);
    const bytes = Buffer.concat([Buffer.from(`{"content":"${text}`), Buffer.from([0xe6, 0x9d]), Buffer.from('"}')]);

    expect((await post(bytes)).statusCode).toBe(200);
    expect(received.body).toEqual({ content: `${text}\uFFFD` });
    expect(received.raw).toBeUndefined();
  });
});
