import { randomUUID } from 'node:crypto';
import { ReceivedRequest } from 'tools/mock-upstream/mock-upstream.server';
import { expectApiError, expectInvalidRequest, userMessage } from 'test/e2e/v1-helpers';
import { Customer, parseEventStream, TestGateway } from 'test/support/gateway';

const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * What the gateway does with the upstream's answers: oversized ones are abnormal (another route, or
 * a broken-stream event once the client got bytes), error texts are made safe to show, and errors
 * that say the channel's own account cannot serve move on to the next route.
 */
describe('relay: upstream answers', () => {
  let gateway: TestGateway;
  let customer: Customer;

  beforeAll(async () => {
    gateway = await TestGateway.start({ BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES) });
    customer = await gateway.newCustomer();
  });
  afterAll(() => gateway?.close());

  /** A model routed to one new channel per base URL path, in priority order; returns it and the channel keys. */
  async function modelOver(...paths: string[]): Promise<{ model: string; keys: string[] }> {
    const keys: string[] = [];
    const routes: { channelId: string; upstreamModel: string }[] = [];
    for (const [index, path] of paths.entries()) {
      const channelId = `ch-${randomUUID().slice(0, 8)}`;
      const apiKey = `sk-chan-${randomUUID().replaceAll('-', '')}`;
      await gateway.addChannel(channelId, { baseUrl: `${gateway.mock.url}${path}`, apiKey, priority: 10 - index });
      keys.push(apiKey);
      routes.push({ channelId, upstreamModel: 'mock-gpt' });
    }
    return { model: await gateway.addModel({ routes }), keys };
  }

  async function chatAndCapture(body: Record<string, unknown>) {
    const before = gateway.mock.requests.length;
    const response = await gateway.chat(customer.key, { messages: userMessage(), ...body });
    const received: ReceivedRequest[] = gateway.mock.requests.slice(before);
    return { response, received };
  }

  describe('oversized answers', () => {
    it('should fail over a stream whose first event is over 1 MB', async () => {
      const { model } = await modelOver('/oversize/1100000/v1', '/v1');

      const { response, received } = await chatAndCapture({ model, stream: true });

      expect(response.status).toBe(200);
      expect(parseEventStream(response.text).done).toBe(true);
      expect(response.text.length).toBeLessThan(10_000);
      expect(received.map((request) => request.path)).toEqual([
        '/oversize/1100000/v1/chat/completions',
        '/v1/chat/completions',
      ]);
    });

    it('should fail over a JSON answer over BODY_LIMIT_BYTES', async () => {
      const { model } = await modelOver(`/oversize/${BODY_LIMIT_BYTES * 2}/v1`, '/v1');

      const { response, received } = await chatAndCapture({ model });

      expect(response.status).toBe(200);
      expect(response.body.choices[0].message.content).toBe('Hello from the mock upstream.');
      expect(received).toHaveLength(2);
    });

    it('should answer 500 when the only route sends an oversized answer', async () => {
      const { model } = await modelOver(`/oversize/${BODY_LIMIT_BYTES * 2}/v1`);

      const { response } = await chatAndCapture({ model });

      expectApiError(response, 500, { type: 'server_error', code: null, param: null });
    });

    it('should end a started stream with the broken-stream event when a later event is over 1 MB', async () => {
      const { model } = await modelOver('/v1');

      const { response } = await chatAndCapture({
        model,
        stream: true,
        mock: { oversize_bytes: 1_100_000, oversize_after: 3 },
      });

      expect(response.status).toBe(200);
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(false);
      expect(chunks.at(-1)).toEqual({
        error: { message: expect.any(String), type: 'server_error', param: null, code: 'upstream_stream_broken' },
      });
      expect(response.text.length).toBeLessThan(10_000);
    });

    it('should relay an event just under 1 MB whole', async () => {
      const { model } = await modelOver('/v1');

      const { response } = await chatAndCapture({
        model,
        stream: true,
        mock: { oversize_bytes: 1_000_000, oversize_after: 2 },
      });

      expect(parseEventStream(response.text).done).toBe(true);
      expect(response.text.length).toBeGreaterThan(1_000_000);
    });
  });

  describe('upstream error text', () => {
    it('should relay a 400 without the upstream key, organisation, URL or e-mail', async () => {
      const { model, keys } = await modelOver('/v1');
      const secrets = [
        keys[0],
        'sk-live-AbCdEf1234567890',
        'org-Zx81b7Qp3kL',
        'https://upstream.example.com/v1',
        'ops@upstream.example.com',
      ];
      const message = `Invalid 'temperature' for key ${secrets[0]} (also ${secrets[1]}) of ${secrets[2]}; see ${secrets[3]} or write to ${secrets[4]}`;

      const { response, received } = await chatAndCapture({ model, mock: { status: 400, error_message: message } });

      expectInvalidRequest(response);
      const text: string = response.body.error.message;
      expect(text).toContain("Invalid 'temperature'");
      for (const secret of [...secrets, 'upstream.example.com', 'AbCdEf1234567890']) {
        expect(text).not.toContain(secret);
      }
      expect(received).toHaveLength(1);
    });
  });

  describe('errors that mean the channel account cannot serve', () => {
    it.each([
      ['a 400 insufficient_quota', '/fail/400/insufficient_quota/v1'],
      ['a 400 billing_not_active', '/fail/400/billing_not_active/v1'],
      ['a 400 invalid_api_key', '/fail/400/invalid_api_key/v1'],
      ['a 402', '/status/402/v1'],
    ])('should fail over on %s to the next route', async (_what, path) => {
      const { model, keys } = await modelOver(path, '/v1');

      const { response, received } = await chatAndCapture({ model });

      expect(response.status).toBe(200);
      expect(response.body.choices[0].message.content).toBe('Hello from the mock upstream.');
      expect(received.map((request) => request.headers.authorization)).toEqual(keys.map((key) => `Bearer ${key}`));
    });

    it('should not retry a 400 about the request itself', async () => {
      const { model } = await modelOver('/fail/400/invalid_value/v1', '/v1');

      const { response, received } = await chatAndCapture({ model });

      expectInvalidRequest(response);
      expect(received).toHaveLength(1);
    });
  });
});
