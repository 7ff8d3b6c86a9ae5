import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { countMockPromptTokens } from 'tools/mock-upstream/mock-upstream.server';
import { Customer, parseEventStream, TestGateway } from 'test/support/gateway';
import { expectApiError, expectInvalidRequest, userMessage } from 'test/e2e/v1-helpers';

const MOCK_REPLY = 'Hello from the mock upstream.';
const UPSTREAM_MODEL = 'mock-gpt-stream-upstream';

interface TimedRead {
  at: number;
  text: string;
}

/** Reads a fetch body piece by piece, noting when each piece arrived (ms since `startedAt`). */
async function readTimed(response: Response, startedAt: number): Promise<{ reads: TimedRead[]; endedAt: number }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const reads: TimedRead[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      return { reads, endedAt: performance.now() - startedAt };
    }
    reads.push({ at: performance.now() - startedAt, text: decoder.decode(value, { stream: true }) });
  }
}

const waitFor = async (condition: () => boolean, timeoutMs: number): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
};

/**
 * An upstream of our own that streams a long, slow reply, so the test can see when the gateway
 * hangs up on it (the mock upstream does not expose its connections).
 */
async function startSlowUpstream(): Promise<{ url: string; closes: { early: boolean }[]; server: Server }> {
  const closes: { early: boolean }[] = [];
  const server = createServer((req, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const head = { id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1, model: 'slow' };
      const write = (delta: object, finish: string | null) =>
        res.write(`data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      write({ role: 'assistant', content: '' }, null);
      let sent = 0;
      const timer = setInterval(() => {
        if (++sent > 30) {
          clearInterval(timer);
          write({}, 'stop');
          res.end('data: [DONE]\n\n');
          return;
        }
        write({ content: `piece${sent} ` }, null);
      }, 300);
      res.on('close', () => {
        clearInterval(timer);
        closes.push({ early: !res.writableFinished });
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, closes, server };
}

describe('POST /v1/chat/completions with stream: true (SPEC 2.2 and 6)', () => {
  let gateway: TestGateway;
  let customer: Customer;
  let model: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    const channelId = `ch-${randomUUID().slice(0, 8)}`;
    await gateway.addChannel(channelId, { baseUrl: `${gateway.mock.url}/v1` });
    model = await gateway.addModel({ routes: [{ channelId, upstreamModel: UPSTREAM_MODEL }] });
    customer = await gateway.newCustomer({ balance: '10' });
  });
  afterAll(() => gateway.close());

  const stream = (body: Record<string, unknown>) =>
    gateway.chat(customer.key, { model, messages: userMessage(), stream: true, ...body });

  /** A fetch whose body the test reads itself. */
  const streamFetch = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: userMessage(), stream: true, ...body }),
      signal,
    });

  describe('a normal stream', () => {
    it('should answer 200 with an event stream', async () => {
      const response = await stream({});

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    });

    it('should frame every event as one "data: <json>" line and a blank line, ending with data: [DONE]', async () => {
      const response = await stream({});

      expect(response.text.endsWith('data: [DONE]\n\n')).toBe(true);
      const events = response.text.slice(0, -2).split('\n\n');
      expect(events.length).toBeGreaterThan(3);
      for (const event of events) {
        expect(event).toMatch(/^data: [^\n]+$/);
      }
      for (const event of events.slice(0, -1)) {
        expect(() => JSON.parse(event.slice('data: '.length))).not.toThrow();
      }
      expect(events.filter((event) => event === 'data: [DONE]')).toHaveLength(1);
    });

    it('should start with a role chunk, carry the content, and end with an empty-delta stop chunk', async () => {
      const response = await stream({});
      const { chunks, done } = parseEventStream(response.text);

      expect(done).toBe(true);
      expect(chunks[0].choices).toEqual([
        expect.objectContaining({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }),
      ]);
      const middle = chunks.slice(1, -1);
      expect(middle.length).toBeGreaterThan(1);
      for (const chunk of middle) {
        expect(chunk.choices).toEqual([
          expect.objectContaining({ index: 0, delta: { content: expect.any(String) }, finish_reason: null }),
        ]);
      }
      expect(middle.map((chunk) => chunk.choices[0].delta.content).join('')).toBe(MOCK_REPLY);
      expect(chunks.at(-1).choices).toEqual([expect.objectContaining({ index: 0, delta: {}, finish_reason: 'stop' })]);
    });

    it('should give every chunk the same id, object chat.completion.chunk, an integer created and our model id', async () => {
      const response = await stream({});
      const { chunks } = parseEventStream(response.text);

      const ids = new Set(chunks.map((chunk) => chunk.id));
      expect(ids.size).toBe(1);
      expect([...ids][0]).toEqual(expect.stringMatching(/\S/));
      for (const chunk of chunks) {
        expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model });
        expect(Number.isInteger(chunk.created)).toBe(true);
      }
      expect(response.text).not.toContain(UPSTREAM_MODEL);
    });

    it('should give each stream its own id', async () => {
      const first = parseEventStream((await stream({})).text).chunks[0].id;
      const second = parseEventStream((await stream({})).text).chunks[0].id;

      expect(first).not.toBe(second);
    });

    it('should relay a custom reply piece by piece', async () => {
      const reply = 'Grüße aus 東京 🎉 one two three';
      const { chunks } = parseEventStream((await stream({ mock: { reply } })).text);

      const pieces = chunks.slice(1, -1).map((chunk) => chunk.choices[0].delta.content);
      expect(pieces.length).toBe(7);
      expect(pieces.join('')).toBe(reply);
    });

    it('should end with finish_reason length when max_tokens cuts the reply', async () => {
      const { chunks, done } = parseEventStream((await stream({ max_tokens: 2 })).text);

      expect(done).toBe(true);
      expect(chunks.slice(1, -1).map((chunk) => chunk.choices[0].delta.content)).toEqual(['Hello ', 'from ']);
      expect(chunks.at(-1).choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' });
    });

    it('should send no usage without stream_options.include_usage', async () => {
      const { chunks } = parseEventStream((await stream({})).text);

      for (const chunk of chunks) {
        expect(chunk.usage ?? null).toBeNull();
      }
    });

    it('should send a usage chunk before [DONE] with stream_options.include_usage', async () => {
      const messages = [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Say hi to me' },
      ];

      const response = await stream({ messages, stream_options: { include_usage: true } });
      const { chunks, done } = parseEventStream(response.text);

      expect(done).toBe(true);
      const withUsage = chunks.filter((chunk) => chunk.usage);
      expect(withUsage).toHaveLength(1);
      const promptTokens = countMockPromptTokens(messages);
      expect(withUsage[0]).toMatchObject({
        id: chunks[0].id,
        object: 'chat.completion.chunk',
        model,
        choices: [],
        usage: { prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5 },
      });
      expect(chunks.at(-1)).toBe(withUsage[0]);
      expect(chunks.at(-2).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    });

    it.each([
      ['without stream_options', {}],
      ['with stream_options.include_usage true', { stream_options: { include_usage: true } }],
      ['with stream_options.include_usage false', { stream_options: { include_usage: false } }],
    ])(
      'should relay a streaming request %s unchanged but for model and the usage it bills by',
      async (_name, extra) => {
        const before = gateway.mock.requests.length;

        const response = await stream({ temperature: 0.3, ...extra });

        expect(response.status).toBe(200);
        const received = gateway.mock.requests.slice(before);
        expect(received).toHaveLength(1);
        // Billing asks every stream's upstream for its exact usage (issue 3); whether the client
        // sees the usage chunk still follows what the client asked (tested above and below).
        expect(received[0].body).toEqual({
          model: UPSTREAM_MODEL,
          messages: userMessage(),
          stream: true,
          temperature: 0.3,
          ...extra,
          stream_options: { include_usage: true },
        });
      },
    );
  });

  describe('delivery as it happens', () => {
    it('should deliver the first chunk long before the stream ends', async () => {
      const startedAt = performance.now();
      const response = await streamFetch({ mock: { reply: 'one two three four five', chunk_delay_ms: 200 } });

      const { reads, endedAt } = await readTimed(response, startedAt);

      expect(response.status).toBe(200);
      // 8 events 200 ms apart: the whole stream takes about 1.4 s
      expect(endedAt).toBeGreaterThan(1200);
      expect(reads[0].text).toContain('"role":"assistant"');
      expect(reads[0].text).not.toContain('[DONE]');
      expect(endedAt - reads[0].at).toBeGreaterThan(1000);
      expect(reads.length).toBeGreaterThanOrEqual(5);
      const { chunks, done } = parseEventStream(reads.map((read) => read.text).join(''));
      expect(done).toBe(true);
      expect(chunks.slice(1, -1).map((chunk) => chunk.choices[0].delta.content)).toEqual([
        'one ',
        'two ',
        'three ',
        'four ',
        'five',
      ]);
    });

    it('should deliver each content piece as soon as the upstream sends it', async () => {
      const startedAt = performance.now();
      const response = await streamFetch({ mock: { reply: 'alpha beta gamma', chunk_delay_ms: 300 } });

      const { reads } = await readTimed(response, startedAt);

      const arrivalOf = (word: string) => reads.find((read) => read.text.includes(word))!.at;
      expect(arrivalOf('beta') - arrivalOf('alpha')).toBeGreaterThan(150);
      expect(arrivalOf('gamma') - arrivalOf('beta')).toBeGreaterThan(150);
    });
  });

  describe('a stream the upstream breaks', () => {
    it('should send the first chunks, then an error event, and no [DONE]', async () => {
      const response = await stream({ mock: { break_after: 2 } });
      const { chunks, done, events } = parseEventStream(response.text);

      expect(response.status).toBe(200);
      expect(done).toBe(false);
      expect(events).not.toContain('data: [DONE]');
      expect(chunks).toHaveLength(4);
      expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.slice(1, 3).map((chunk) => chunk.choices[0].delta.content)).toEqual(['Hello ', 'from ']);
      expect(chunks.slice(0, 3).every((chunk) => chunk.choices[0].finish_reason === null)).toBe(true);
      expect(chunks[3]).toEqual({
        error: { message: expect.any(String), type: 'server_error', param: null, code: expect.anything() },
      });
      expect(events.at(-1)).toMatch(/^data: \{"error":/);
    });

    it('should send an error event when the upstream breaks right after the role chunk', async () => {
      const { chunks, done } = parseEventStream((await stream({ mock: { break_after: 0 } })).text);

      expect(done).toBe(false);
      expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.at(-1)).toEqual({ error: expect.objectContaining({ type: 'server_error' }) });
    });

    it('should keep serving after a broken stream', async () => {
      await stream({ mock: { break_after: 1 } });

      const { done } = parseEventStream((await stream({})).text);

      expect(done).toBe(true);
    });
  });

  describe('errors before the stream starts', () => {
    it('should answer a JSON 400, not an event stream, to an invalid streaming request', async () => {
      const response = await stream({ temperature: 3 });

      expectInvalidRequest(response, 'temperature');
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('should answer a JSON 400 to an unknown model with stream: true', async () => {
      const response = await stream({ model: 'no-such-model' });

      expectInvalidRequest(response, 'model');
    });

    it('should relay an upstream 400 as a JSON 400, not an event stream', async () => {
      const response = await stream({ mock: { status: 400 } });

      expectApiError(response, 400, { type: 'invalid_request_error', code: null, param: null });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('should answer a JSON 500 when the upstream sends garbage instead of a stream', async () => {
      const response = await stream({ mock: { garbage: true } });

      expectApiError(response, 500, { type: 'server_error', code: null, param: null });
    });
  });

  describe('a client that hangs up mid-stream', () => {
    it('should stay healthy and serve the next request', async () => {
      const controller = new AbortController();
      const response = await streamFetch(
        { mock: { reply: 'a b c d e f g h i j k l', chunk_delay_ms: 300 } },
        controller.signal,
      );
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain('"role":"assistant"');

      controller.abort();
      await reader.read().catch(() => undefined);

      const next = await gateway.chat(customer.key, { model, messages: userMessage() });
      expect(next.status).toBe(200);
      expect(next.body.choices[0].message.content).toBe(MOCK_REPLY);
      const nextStream = parseEventStream((await stream({})).text);
      expect(nextStream.done).toBe(true);
    });

    it('should close its connection to the upstream promptly', async () => {
      const slow = await startSlowUpstream();
      try {
        const channelId = `ch-${randomUUID().slice(0, 8)}`;
        await gateway.addChannel(channelId, { baseUrl: slow.url });
        const slowModel = await gateway.addModel({ routes: [{ channelId, upstreamModel: 'slow' }] });
        const controller = new AbortController();
        const response = await streamFetch({ model: slowModel }, controller.signal);
        const reader = response.body!.getReader();
        await reader.read();
        expect(slow.closes).toEqual([]);

        controller.abort();
        await reader.read().catch(() => undefined);

        // The upstream would stream for 9 more seconds; the gateway must hang up within about a second.
        expect(await waitFor(() => slow.closes.length > 0, 2000)).toBe(true);
        expect(slow.closes).toEqual([{ early: true }]);
        expect((await gateway.chat(customer.key, { model, messages: userMessage() })).status).toBe(200);
      } finally {
        slow.server.closeAllConnections();
        slow.server.close();
      }
    });
  });
});
