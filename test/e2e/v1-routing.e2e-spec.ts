import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { ReceivedRequest } from 'tools/mock-upstream/mock-upstream.server';
import { Customer, HttpResult, parseEventStream, TestGateway } from 'test/support/gateway';
import { expectApiError, userMessage } from 'test/e2e/v1-helpers';

const UNREACHABLE = 'http://127.0.0.1:1/v1';
const HEADERS_TIMEOUT_MS = 1000;

interface ChannelSpec {
  baseUrl: string;
  priority?: number;
  weight?: number;
  enabled?: boolean;
}

describe('/v1 routing and failover', () => {
  let gateway: TestGateway;
  let customer: Customer;

  beforeAll(async () => {
    gateway = await TestGateway.start({ UPSTREAM_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) });
    customer = await gateway.newCustomer({ balance: '10' });
  });
  afterAll(() => gateway.close());

  const healthy = () => `${gateway.mock.url}/v1`;
  const failing = (status: number) => `${gateway.mock.url}/status/${status}/v1`;
  const hanging = () => `${gateway.mock.url}/hang/v1`;

  /** A model routed to one new channel per spec; each channel has its own upstream key, to tell them apart. */
  async function modelWith(...specs: ChannelSpec[]): Promise<{ model: string; keys: string[] }> {
    const keys: string[] = [];
    const routes: { channelId: string; upstreamModel: string }[] = [];
    for (const spec of specs) {
      const channelId = `ch-${randomUUID().slice(0, 8)}`;
      const apiKey = `upstream-key-${channelId}`;
      await gateway.addChannel(channelId, { ...spec, apiKey });
      keys.push(apiKey);
      routes.push({ channelId, upstreamModel: 'mock-gpt' });
    }
    return { model: await gateway.addModel({ routes }), keys };
  }

  /** Sends one request and returns the response and what the mock upstream received meanwhile. */
  async function chatAndCapture(
    body: Record<string, unknown>,
  ): Promise<{ response: HttpResult; received: ReceivedRequest[] }> {
    const before = gateway.mock.requests.length;
    const response = await gateway.chat(customer.key, { messages: userMessage(), ...body });
    return { response, received: gateway.mock.requests.slice(before) };
  }

  const channelKeyOf = (request: ReceivedRequest) => String(request.headers.authorization).replace(/^Bearer /, '');

  describe('failover to a lower-priority channel', () => {
    it('should succeed through the next channel when the first is unreachable', async () => {
      const { model, keys } = await modelWith(
        { baseUrl: UNREACHABLE, priority: 10 },
        { baseUrl: healthy(), priority: 0 },
      );

      const { response, received } = await chatAndCapture({ model });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ object: 'chat.completion', model });
      expect(received.map(channelKeyOf)).toEqual([keys[1]]);
    });

    it.each([500, 502, 503, 504])(
      'should succeed through the next channel when the first answers %i',
      async (status) => {
        const { model, keys } = await modelWith(
          { baseUrl: failing(status), priority: 10 },
          { baseUrl: healthy(), priority: 0 },
        );

        const { response, received } = await chatAndCapture({ model });

        expect(response.status).toBe(200);
        expect(response.body.choices[0].message.content).toBe('Hello from the mock upstream.');
        expect(received.map((request) => [channelKeyOf(request), request.path])).toEqual([
          [keys[0], `/status/${status}/v1/chat/completions`],
          [keys[1], '/v1/chat/completions'],
        ]);
      },
    );

    it.each([429, 401])('should succeed through the next channel when the first answers %i', async (status) => {
      const { model } = await modelWith({ baseUrl: failing(status), priority: 10 }, { baseUrl: healthy() });

      const { response, received } = await chatAndCapture({ model });

      expect(response.status).toBe(200);
      expect(received).toHaveLength(2);
    });

    it('should succeed through the next channel when the first never answers', async () => {
      const { model } = await modelWith({ baseUrl: hanging(), priority: 10 }, { baseUrl: healthy(), priority: 0 });
      const startedAt = Date.now();

      const response = await gateway.chat(customer.key, { model, messages: userMessage() });

      expect(response.status).toBe(200);
      expect(Date.now() - startedAt).toBeLessThan(HEADERS_TIMEOUT_MS + 3000);
    });

    it('should succeed through the next channel when the first sends garbage', async () => {
      const garbage = await startGarbageUpstream();
      try {
        const { model } = await modelWith({ baseUrl: garbage.url, priority: 10 }, { baseUrl: healthy() });

        const response = await gateway.chat(customer.key, { model, messages: userMessage() });

        expect(response.status).toBe(200);
        expect(response.body.choices[0].message.content).toBe('Hello from the mock upstream.');
      } finally {
        await garbage.close();
      }
    });

    it('should fail over a stream before its first byte, and deliver a complete stream', async () => {
      const { model } = await modelWith(
        { baseUrl: failing(500), priority: 10 },
        { baseUrl: UNREACHABLE, priority: 5 },
        { baseUrl: healthy(), priority: 0 },
      );

      const response = await gateway.chat(customer.key, { model, messages: userMessage(), stream: true });

      expect(response.status).toBe(200);
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(true);
      expect(chunks.every((chunk) => chunk.model === model)).toBe(true);
    });
  });

  describe('choosing among healthy channels', () => {
    it('should always use the highest-priority channel while it is healthy', async () => {
      const { model, keys } = await modelWith(
        { baseUrl: healthy(), priority: 0 },
        { baseUrl: healthy(), priority: 10 },
        { baseUrl: healthy(), priority: 5 },
      );

      const used: string[] = [];
      for (let i = 0; i < 8; i++) {
        const { response, received } = await chatAndCapture({ model });
        expect(response.status).toBe(200);
        used.push(...received.map(channelKeyOf));
      }

      expect(new Set(used)).toEqual(new Set([keys[1]]));
    });

    it('should never use a disabled channel', async () => {
      const { model, keys } = await modelWith(
        { baseUrl: healthy(), priority: 10, enabled: false },
        { baseUrl: healthy(), priority: 0 },
      );

      const used: string[] = [];
      for (let i = 0; i < 5; i++) {
        const { response, received } = await chatAndCapture({ model });
        expect(response.status).toBe(200);
        used.push(...received.map(channelKeyOf));
      }

      expect(new Set(used)).toEqual(new Set([keys[1]]));
    });

    it('should use a weight-0 channel only as a last resort', async () => {
      const { model, keys } = await modelWith({ baseUrl: healthy(), weight: 0 }, { baseUrl: healthy(), weight: 1 });

      const used: string[] = [];
      for (let i = 0; i < 10; i++) {
        const { received } = await chatAndCapture({ model });
        used.push(...received.map(channelKeyOf));
      }

      expect(new Set(used)).toEqual(new Set([keys[1]]));
    });

    it('should spread requests over channels of equal priority and weight', async () => {
      const { model, keys } = await modelWith({ baseUrl: healthy() }, { baseUrl: healthy() });

      const used: string[] = [];
      for (let i = 0; i < 40; i++) {
        const { received } = await chatAndCapture({ model });
        used.push(...received.map(channelKeyOf));
      }

      // Each leads with probability 1/2: seeing one of them fewer than 5 times in 40 has odds below 1e-6.
      for (const key of keys) {
        expect(used.filter((usedKey) => usedKey === key).length).toBeGreaterThanOrEqual(5);
      }
    });
  });

  describe('when no channel can serve', () => {
    it('should answer 502 when every channel is unreachable', async () => {
      const { model } = await modelWith({ baseUrl: UNREACHABLE, priority: 10 }, { baseUrl: 'http://127.0.0.1:2/v1' });

      const response = await gateway.chat(customer.key, { model, messages: userMessage() });

      expectServerError(response, 502);
    });

    it('should answer 502 when no channel sends its headers in time', async () => {
      const { model } = await modelWith({ baseUrl: hanging() });

      const response = await gateway.chat(customer.key, { model, messages: userMessage() });

      expectServerError(response, 502);
    });

    it('should answer 500 server_error when every channel answers 5xx, after trying each', async () => {
      const { model } = await modelWith({ baseUrl: failing(500), priority: 10 }, { baseUrl: failing(503) });

      const { response, received } = await chatAndCapture({ model });

      expectApiError(response, 500, { type: 'server_error', code: null, param: null });
      expect(received).toHaveLength(2);
    });

    it('should answer 500 server_error when the upstream answers 500 through the mock switch', async () => {
      const { model } = await modelWith({ baseUrl: healthy() });

      const response = await gateway.chat(customer.key, { model, messages: userMessage(), mock: { status: 500 } });

      expectApiError(response, 500, { type: 'server_error', code: null, param: null });
    });

    it('should answer 500 server_error when the upstream answers garbage', async () => {
      const { model } = await modelWith({ baseUrl: healthy() });

      const response = await gateway.chat(customer.key, { model, messages: userMessage(), mock: { garbage: true } });

      expectApiError(response, 500, { type: 'server_error', code: null, param: null });
    });

    it('should answer 503 server_overloaded when every channel answers 429', async () => {
      const { model } = await modelWith({ baseUrl: failing(429), priority: 10 }, { baseUrl: failing(429) });

      const { response, received } = await chatAndCapture({ model });

      expectApiError(response, 503, { type: 'server_error', code: 'server_overloaded', param: null });
      expect(received).toHaveLength(2);
    });

    it('should answer 503 server_overloaded when the upstream answers 429 through the mock switch', async () => {
      const { model } = await modelWith({ baseUrl: healthy() });

      const response = await gateway.chat(customer.key, { model, messages: userMessage(), mock: { status: 429 } });

      expectApiError(response, 503, { type: 'server_error', code: 'server_overloaded', param: null });
    });

    it('should answer the same errors to streaming requests, as JSON', async () => {
      const unreachable = await modelWith({ baseUrl: UNREACHABLE });
      const broken = await modelWith({ baseUrl: failing(500) });
      const busy = await modelWith({ baseUrl: failing(429) });

      const stream = (model: string) => gateway.chat(customer.key, { model, messages: userMessage(), stream: true });

      expectServerError(await stream(unreachable.model), 502);
      expectApiError(await stream(broken.model), 500, { type: 'server_error', code: null, param: null });
      expectApiError(await stream(busy.model), 503, { type: 'server_error', code: 'server_overloaded', param: null });
    });

    it('should not reveal the upstream’s address, key or model name in the error', async () => {
      const { model, keys } = await modelWith({ baseUrl: UNREACHABLE });
      const five = await modelWith({ baseUrl: failing(500) });

      for (const response of [
        await gateway.chat(customer.key, { model, messages: userMessage() }),
        await gateway.chat(customer.key, { model: five.model, messages: userMessage() }),
      ]) {
        expect(response.status).toBeGreaterThanOrEqual(500);
        expect(response.text).not.toContain('127.0.0.1');
        expect(response.text).not.toContain(keys[0]);
        expect(response.text).not.toContain(five.keys[0]);
        expect(response.text).not.toContain('mock-gpt');
      }
    });
  });

  describe('an upstream that rejects the request', () => {
    it('should relay an upstream 400 as a 400 and not retry it on other channels', async () => {
      const { model } = await modelWith({ baseUrl: healthy(), priority: 10 }, { baseUrl: healthy(), priority: 0 });

      const { response, received } = await chatAndCapture({ model, mock: { status: 400 } });

      expectApiError(response, 400, { type: 'invalid_request_error', code: null, param: null });
      expect(received).toHaveLength(1);
    });

    it('should not retry a streaming request the upstream rejects with 400', async () => {
      const { model } = await modelWith({ baseUrl: healthy(), priority: 10 }, { baseUrl: healthy(), priority: 0 });

      const { response, received } = await chatAndCapture({ model, stream: true, mock: { status: 400 } });

      expectApiError(response, 400, { type: 'invalid_request_error', code: null, param: null });
      expect(received).toHaveLength(1);
    });
  });

  it('should keep serving normally after all of the above', async () => {
    const { model } = await modelWith({ baseUrl: healthy() });

    const response = await gateway.chat(customer.key, { model, messages: userMessage() });

    expect(response.status).toBe(200);
  });
});

/** A 502's body is still the error object, of type server_error (docs/errors.md). */
function expectServerError(response: HttpResult, status: number): void {
  const code: unknown = response.body?.error?.code;
  expect(code === null || typeof code === 'string').toBe(true);
  expectApiError(response, status, { type: 'server_error', code, param: null });
  expect(response.headers.get('x-request-id')).toEqual(expect.stringMatching(/\S/));
}

/** An upstream that answers 200 with a body that is not a completion. */
async function startGarbageUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"this is": "not a completion"');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
