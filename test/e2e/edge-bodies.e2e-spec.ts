import { sendLargeBody, RawExchange } from 'test/e2e/edge-helpers';
import { expectApiError, expectInvalidRequest, userMessage } from 'test/e2e/v1-helpers';
import { Customer, HttpResult, TestGateway } from 'test/support/gateway';

const MB = 1024 * 1024;
/** The default BODY_LIMIT_BYTES (20 MB) and a body over it, as an image-heavy client might send. */
const OVERSIZED_BYTES = 25 * MB;

const asResult = (exchange: RawExchange): HttpResult => ({
  status: exchange.status ?? 0,
  headers: new Headers(exchange.headers),
  body: exchange.body,
  text: '',
});

function expectPayloadTooLarge(exchange: RawExchange): void {
  expectApiError(asResult(exchange), 413, { type: 'invalid_request_error', code: 'payload_too_large', param: null });
}

describe('request bodies at the edge', () => {
  let gateway: TestGateway;
  let customer: Customer;
  let model: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    model = await gateway.addModel();
    customer = await gateway.newCustomer({ balance: '10' });
  });
  afterAll(() => gateway.close());

  const completionHeaders = () => ({ authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' });

  describe('over BODY_LIMIT_BYTES on /v1', () => {
    it('should answer 413 to a client still writing a body with a Content-Length, without resetting it', async () => {
      const exchange = await sendLargeBody(gateway.url, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: completionHeaders(),
        bodyBytes: OVERSIZED_BYTES,
        pauseMs: 1,
      });

      expectPayloadTooLarge(exchange);
      expect(exchange.error).toBeNull();
      expect(exchange.sent).toBe(OVERSIZED_BYTES);
      // Answered from the Content-Length, long before the body was sent.
      expect(exchange.sentBeforeAnswer).toBeLessThan(OVERSIZED_BYTES / 2);
      expect(exchange.headers['x-request-id']).toMatch(/^req_/);
    }, 60_000);

    it('should answer 413 to a chunked body once it passes the limit, without resetting the client', async () => {
      const exchange = await sendLargeBody(gateway.url, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: completionHeaders(),
        bodyBytes: OVERSIZED_BYTES,
        chunked: true,
        pauseMs: 1,
      });

      expectPayloadTooLarge(exchange);
      expect(exchange.error).toBeNull();
      expect(exchange.sent).toBe(OVERSIZED_BYTES);
    }, 60_000);

    it('should serve the next request on the same server after an oversized one', async () => {
      const response = await gateway.chat(customer.key, { model, messages: userMessage() });

      expect(response.status).toBe(200);
    });
  });

  describe('the API key is checked before the body is read', () => {
    it.each([
      ['an unknown key', '/v1/chat/completions', { authorization: 'Bearer sk-not-a-real-key-0123456789' }],
      ['no key', '/v1/chat/completions', {}],
      // The router decodes %76 ('v') and serves the /v1 route; the URL it keeps is still encoded.
      ['an unknown key on a percent-encoded path', '/%761/chat/completions', { authorization: 'Bearer sk-nope' }],
    ])(
      'should answer 401 to %s while the client is still sending a huge body',
      async (_case, path, auth) => {
        const exchange = await sendLargeBody(gateway.url, {
          method: 'POST',
          path,
          headers: { ...auth, 'content-type': 'application/json' },
          // Under the limit, so only the key can refuse it early.
          bodyBytes: 19 * MB,
          stopWhenAnswered: true,
          chunkBytes: 16 * 1024,
          pauseMs: 20,
        });

        expectApiError(asResult(exchange), 401, {
          type: 'invalid_request_error',
          code: 'invalid_api_key',
          param: null,
        });
        // The answer came while most of the body was still unsent: the server did not wait for it.
        expect(exchange.sentBeforeAnswer).toBeLessThan(4 * MB);
        expect(exchange.error).toBeNull();
      },
      60_000,
    );

    it('should still accept a body of a few hundred kilobytes with a valid key', async () => {
      const response = await gateway.chat(customer.key, {
        model,
        messages: userMessage(`Say hi ${'padding '.repeat(40_000)}`),
      });

      expect(response.status).toBe(200);
    });
  });

  describe('routes outside /v1 take small bodies only', () => {
    it('should answer 413 to a /console/auth body over 16 KB', async () => {
      const response = await gateway.call('POST', '/console/auth/login', {
        body: { email: 'someone@example.com', password: 'p'.repeat(20 * 1024) },
      });

      expectApiError(response, 413, { type: 'invalid_request_error', code: 'payload_too_large', param: null });
    });

    it('should still process a /console/auth body under 16 KB', async () => {
      // JSON whitespace pads it to 8 KB without tripping the fields' own length checks.
      const padded = JSON.stringify({ email: 'nobody@example.com', password: 'password-123' }) + ' '.repeat(8 * 1024);
      const response = await gateway.call('POST', '/console/auth/login', { body: padded });

      expectApiError(response, 401, { type: 'invalid_request_error', code: 'invalid_credentials', param: null });
    });

    it('should answer 413 to a console or admin body over 64 KB', async () => {
      const filler = 'x'.repeat(100 * 1024);
      const consoleResponse = await gateway.call('POST', '/console/keys', {
        token: customer.token,
        body: { name: filler },
      });
      const adminResponse = await gateway.admin('PUT', '/admin/channels/too-big', { baseUrl: filler });

      for (const response of [consoleResponse, adminResponse]) {
        expectApiError(response, 413, { type: 'invalid_request_error', code: 'payload_too_large', param: null });
      }
    });
  });

  describe('JSON that is malformed or poisoned', () => {
    const balance = async () =>
      (await gateway.call<{ balance: string }>('GET', '/console/account', { token: customer.token })).body.balance;

    it.each([
      ['not JSON', '{"model": '],
      ['an empty body', ''],
      ['a __proto__ key', '{"model": "m", "messages": [], "__proto__": {"admin": true}}'],
      ['a constructor holding a prototype', '{"model": "m", "messages": [{"constructor": {"prototype": {"x": 1}}}]}'],
      // Strings this long are read apart from the rest of the body (long-string-json.ts), and must fail as JSON.parse fails.
      [
        'a control character inside a megabyte string',
        `{"model": "m", "messages": [{"content": "${'A'.repeat(MB)}\u0001"}]}`,
      ],
      ['a megabyte string where a key belongs', `{"model": "m", "messages": [{"content": 1, "${'A'.repeat(MB)}"}]}`],
    ])("should answer 400 in SPEC's shape to %s, charging nothing", async (_name, body) => {
      const before = await balance();
      const response = await gateway.call('POST', '/v1/chat/completions', { token: customer.key, body });

      expectInvalidRequest(response);
      expect(await balance()).toBe(before);
    });

    it('should still accept a body that starts with a byte-order mark', async () => {
      const body = `\uFEFF${JSON.stringify({ model, messages: userMessage('Say hi') })}`;
      const response = await gateway.call('POST', '/v1/chat/completions', { token: customer.key, body });

      expect(response.status).toBe(200);
    });
  });

  describe('what an OpenAI-compatible upstream is sent', () => {
    const send = (bytes: Uint8Array) =>
      fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: completionHeaders(), body: bytes });
    const lastSent = () => gateway.mock.requests.at(-1)!;

    it("should be the client's own bytes, non-ASCII text and spacing included, with only the model swapped", async () => {
      const text = (name: string) =>
        `\uFEFF{ "model" : ${JSON.stringify(name)},\n  "messages": [{"role":"user","content":"東京 café 😀 \\u00e9"}] }`;

      const response = await send(Buffer.from(text(model)));

      expect(response.status).toBe(200);
      expect(lastSent().rawBody).toBe(text('mock-gpt').slice(1));
    });

    it.each([
      ['100 KB', 100 * 1024],
      ['1.1 MB', 1.1 * MB],
    ])("should be the client's own bytes when they carry a string of %s", async (_name, length) => {
      const content = `${'QUJD+/'.repeat(length / 6)}==`;
      const text = (name: string) =>
        `{"model": ${JSON.stringify(name)}, "messages": [{"role": "user", "content": "${content}"}]}`;

      const response = await send(Buffer.from(text(model)));

      expect(response.status).toBe(200);
      expect(lastSent().rawBody).toBe(text('mock-gpt'));
      expect((lastSent().body as { messages: [{ content: string }] }).messages[0].content).toBe(content);
    });

    it('should be re-serialised, meaning what was billed, when the client sent invalid UTF-8', async () => {
      const head = Buffer.from(`{ "model": ${JSON.stringify(model)}, "messages": [{"role": "user", "content": "a`);
      const bytes = Buffer.concat([head, Buffer.from([0xff, 0xc3]), Buffer.from('b"}] }')]);

      const response = await send(bytes);

      expect(response.status).toBe(200);
      // Read as the gateway read it (each bad byte a replacement character), not the client's bytes.
      const billed = { model: 'mock-gpt', messages: [{ role: 'user', content: 'a\uFFFD\uFFFDb' }] };
      expect(lastSent().rawBody).toBe(JSON.stringify(billed));
    });
  });
});
