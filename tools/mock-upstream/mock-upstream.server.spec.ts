import { float32Base64, MOCK_EMBEDDING_DIMENSIONS, mockEmbedding } from 'tools/mock-upstream/mock-embeddings';
import {
  countMockPromptTokens,
  mockArgumentPieces,
  mockValueFor,
  MockUpstream,
  startMockUpstream,
} from 'tools/mock-upstream/mock-upstream.server';

const HEADERS = { authorization: 'Bearer sk-test', 'content-type': 'application/json' };
const MESSAGES = [{ role: 'user', content: 'Say hello' }];
const PIECES = ['Hello ', 'from ', 'the ', 'mock ', 'upstream.'];

interface Choice {
  index: number;
  message?: { role: string; content: string };
  delta?: { role?: string; content?: string };
  logprobs: null;
  finish_reason: string | null;
}

interface ApiBody {
  id: string;
  object: string;
  model: string;
  choices: Choice[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  error: { message: string; type: string; param: null; code: string | null };
}

function json(response: Response): Promise<ApiBody> {
  return response.json() as Promise<ApiBody>;
}

// Splits an SSE body into its JSON chunks; `done` tells whether it ended with `data: [DONE]`.
function parseEvents(text: string): { chunks: ApiBody[]; done: boolean } {
  const data = text
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      return event.slice('data: '.length);
    });
  const done = data.at(-1) === '[DONE]';
  return { chunks: (done ? data.slice(0, -1) : data).map((chunk) => JSON.parse(chunk) as ApiBody), done };
}

function contentOf(chunk: ApiBody): string | undefined {
  return chunk.choices[0].delta?.content;
}

async function readUntilError(response: Response): Promise<{ text: string; error: unknown }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        return { text, error: undefined };
      }
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('startMockUpstream', () => {
  let upstream: MockUpstream;

  beforeEach(async () => {
    upstream = await startMockUpstream();
  });

  afterEach(async () => {
    await upstream.close();
  });

  const post = (body: unknown, path = '/v1/chat/completions', init: RequestInit = {}) =>
    fetch(`${upstream.url}${path}`, {
      method: 'POST',
      headers: HEADERS,
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...init,
    });
  const chat = (extra: Record<string, unknown> = {}) => post({ model: 'gpt-test', messages: MESSAGES, ...extra });

  describe('routing and auth', () => {
    it('should expose a loopback url without trailing slash', () => {
      expect(upstream.url).toBe(`http://127.0.0.1:${upstream.port}`);
    });

    it('should list the mock model', async () => {
      const response = await fetch(`${upstream.url}/v1/models`, { headers: HEADERS });
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual({
        object: 'list',
        data: [{ id: 'mock-gpt', object: 'model', created: 1700000000, owned_by: 'mock' }],
      });
    });

    it('should answer 404 with an OpenAI-style error for unknown routes', async () => {
      for (const [method, path] of [
        ['GET', '/nope'],
        ['GET', '/v1/chat/completions'],
        ['POST', '/v1/audio/speech'],
      ]) {
        const response = await fetch(`${upstream.url}${path}`, { method, headers: HEADERS });
        expect(response.status).toBe(404);
        const body = await json(response);
        expect(body.error).toEqual(
          expect.objectContaining({ type: 'invalid_request_error', param: null, code: 'not_found' }),
        );
        expect(typeof body.error.message).toBe('string');
      }
    });

    it('should reject requests without a non-empty bearer token', async () => {
      for (const authorization of [undefined, 'Bearer ', 'Basic abc']) {
        const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
        const response = await fetch(`${upstream.url}/v1/models`, { headers });
        expect(response.status).toBe(401);
        expect((await json(response)).error).toEqual(
          expect.objectContaining({ type: 'invalid_request_error', code: 'invalid_api_key' }),
        );
      }
    });

    it('should answer 400 for an invalid JSON body', async () => {
      const response = await post('{"model":');
      expect(response.status).toBe(400);
      expect((await json(response)).error.type).toBe('invalid_request_error');
    });
  });

  describe('request recording', () => {
    it('should record method, path, headers, raw and parsed body', async () => {
      await chat();
      await post('not json', '/v1/chat/completions?x=1');
      expect(upstream.requests).toHaveLength(2);
      const [first, second] = upstream.requests;
      expect(first).toEqual(
        expect.objectContaining({
          method: 'POST',
          path: '/v1/chat/completions',
          body: { model: 'gpt-test', messages: MESSAGES },
        }),
      );
      expect(first.headers.authorization).toBe('Bearer sk-test');
      expect(JSON.parse(first.rawBody)).toEqual(first.body);
      expect(second).toEqual(expect.objectContaining({ path: '/v1/chat/completions?x=1', rawBody: 'not json' }));
      expect(second.body).toBeUndefined();
    });

    it('should record unauthorized requests too', async () => {
      await fetch(`${upstream.url}/v1/models`);
      expect(upstream.requests).toHaveLength(1);
    });

    it('should keep only the last 1000 requests', async () => {
      for (let batch = 0; batch < 21; batch++) {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            fetch(`${upstream.url}/v1/models?i=${batch * 50 + i}`, { headers: HEADERS }),
          ),
        );
      }
      expect(upstream.requests).toHaveLength(1000);
      const indexes = upstream.requests.map((request) => Number(request.path.split('=')[1]));
      expect(Math.min(...indexes)).toBeGreaterThanOrEqual(50);
    });

    it('should keep none when told to record no requests, and still answer', async () => {
      const unrecorded = await startMockUpstream({ recordRequests: 0 });
      try {
        const response = await fetch(`${unrecorded.url}/v1/chat/completions`, {
          method: 'POST',
          headers: HEADERS,
          body: JSON.stringify({ model: 'gpt-test', messages: MESSAGES }),
        });
        expect(response.status).toBe(200);
        expect(unrecorded.requests).toHaveLength(0);
      } finally {
        await unrecorded.close();
      }
    });
  });

  describe('non-streaming completions', () => {
    it('should answer a deterministic completion with usage', async () => {
      const response = await chat();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      const body = await json(response);
      expect(body).toEqual({
        id: expect.stringMatching(/^chatcmpl-mock-\d+$/),
        object: 'chat.completion',
        created: expect.any(Number),
        model: 'gpt-test',
        system_fingerprint: 'fp_mock',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hello from the mock upstream.' },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 8, completion_tokens: 5, total_tokens: 13 },
      });
    });

    it('should truncate at max_tokens or max_completion_tokens with finish_reason length', async () => {
      for (const limit of [{ max_tokens: 2 }, { max_completion_tokens: 2 }]) {
        const body = await json(await chat(limit));
        expect(body.choices[0]).toEqual(
          expect.objectContaining({ message: { role: 'assistant', content: 'Hello from ' }, finish_reason: 'length' }),
        );
        expect(body.usage?.completion_tokens).toBe(2);
      }
      const exact = await json(await chat({ max_tokens: 5 }));
      expect(exact.choices[0].finish_reason).toBe('stop');
    });

    it('should answer n identical choices and count their tokens', async () => {
      const body = await json(await chat({ n: 3, mock: { reply: 'One two' } }));
      expect(body.choices.map((choice) => [choice.index, choice.message?.content])).toEqual([
        [0, 'One two'],
        [1, 'One two'],
        [2, 'One two'],
      ]);
      expect(body.usage?.completion_tokens).toBe(6);
    });

    it('should omit usage when asked', async () => {
      const body = await json(await chat({ mock: { omit_usage: true } }));
      expect(body).not.toHaveProperty('usage');
    });

    it('should answer garbage with a JSON content type when asked', async () => {
      const response = await chat({ mock: { garbage: true } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.text()).toBe('<html>not json</html>');
    });

    it('should number completion ids sequentially', async () => {
      const first = await json(await chat());
      const second = await json(await chat());
      expect(Number(second.id.split('-').pop())).toBe(Number(first.id.split('-').pop()) + 1);
    });
  });

  describe('prompt token counting', () => {
    it('should count 3 per message plus words plus 85 per image, plus 3', () => {
      const messages = [
        { role: 'system', content: 'be  brief\nplease' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ];
      expect(countMockPromptTokens(messages)).toBe(3 + 3 + 3 + 3 + 85 + 3);
      expect(countMockPromptTokens([])).toBe(3);
      expect(countMockPromptTokens(undefined)).toBe(3);
    });

    it('should report the counted prompt tokens in usage', async () => {
      const messages = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }];
      const body = await json(await chat({ messages }));
      expect(body.usage?.prompt_tokens).toBe(countMockPromptTokens(messages));
    });
  });

  describe('failure modes', () => {
    it.each([
      [400, 'invalid_request_error', null],
      [429, 'requests', 'rate_limit_exceeded'],
      [503, 'server_error', null],
    ])('should answer mock.status %i with an OpenAI-style error', async (status, type, code) => {
      const response = await chat({ mock: { status } });
      expect(response.status).toBe(status);
      expect(await json(response)).toEqual({ error: { message: `mock error ${status}`, type, param: null, code } });
    });

    it('should answer the status from a /status/<code> prefix for every route', async () => {
      const completion = await post('not even json', '/status/502/v1/chat/completions');
      expect(completion.status).toBe(502);
      expect((await json(completion)).error.type).toBe('server_error');
      const models = await fetch(`${upstream.url}/status/429/v1/models`, { headers: HEADERS });
      expect(models.status).toBe(429);
      expect((await json(models)).error.code).toBe('rate_limit_exceeded');
      const badRequest = await post({}, '/status/422/v1/chat/completions');
      expect((await json(badRequest)).error.type).toBe('invalid_request_error');
    });

    it('should never answer under the /hang prefix until the client gives up', async () => {
      const hanging = post({ model: 'x' }, '/hang/v1/chat/completions', { signal: AbortSignal.timeout(150) });
      await expect(hanging).rejects.toThrow();
      expect(upstream.requests).toHaveLength(1);
    });

    it('should drop hanging requests on close', async () => {
      const hanging = fetch(`${upstream.url}/hang/v1/models`, { headers: HEADERS });
      await waitFor(() => upstream.requests.length === 1);
      await upstream.close();
      await expect(hanging).rejects.toThrow();
    });

    it('should wait mock.latency_ms before answering', async () => {
      const started = Date.now();
      const response = await chat({ mock: { latency_ms: 150 } });
      expect(response.status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(145);
    });

    it('should fail a /flaky/<name> channel with 503 while its name is in `failing`, and serve it otherwise', async () => {
      const path = '/flaky/alpha/v1/chat/completions';
      upstream.failing.add('alpha');
      expect((await post({ model: 'x', messages: MESSAGES }, path)).status).toBe(503);
      expect((await post({ model: 'x', messages: MESSAGES }, '/flaky/beta/v1/chat/completions')).status).toBe(200);
      upstream.failing.delete('alpha');
      const healed = await post({ model: 'x', messages: MESSAGES }, path);
      expect(healed.status).toBe(200);
      expect((await json(healed)).choices[0].message?.content).toBe(PIECES.join(''));
    });

    it('should add errorHeaders to every error answer and to nothing else', async () => {
      upstream.errorHeaders = { 'retry-after': '7' };
      const limited = await post({}, '/status/429/v1/chat/completions');
      expect(limited.headers.get('retry-after')).toBe('7');
      expect((await chat()).headers.get('retry-after')).toBeNull();
    });

    it('should answer garbage under the /garbage prefix', async () => {
      const response = await post({ model: 'x', messages: MESSAGES }, '/garbage/v1/chat/completions');
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('<html>not json</html>');
    });

    it('should send the headers and the start of a JSON body, then nothing, under the /stall prefix', async () => {
      const response = await post({ model: 'x', messages: MESSAGES }, '/stall/v1/chat/completions', {
        signal: AbortSignal.timeout(300),
      });
      expect(response.status).toBe(200);
      const { text, error } = await readUntilError(response);
      expect(text).toMatch(/^\{"id":"chatcmpl-mock-\d+","object":"chat.completion",$/);
      expect(error).toBeDefined();
    });

    it('should apply the server default latency', async () => {
      const slow = await startMockUpstream({ latencyMs: 120 });
      try {
        const started = Date.now();
        await fetch(`${slow.url}/v1/models`, { headers: HEADERS });
        expect(Date.now() - started).toBeGreaterThanOrEqual(115);
      } finally {
        await slow.close();
      }
    });
  });

  describe('streaming completions', () => {
    it('should stream a role chunk, one chunk per piece, a final chunk and [DONE]', async () => {
      const response = await chat({ stream: true });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const { chunks: events, done } = parseEvents(await response.text());
      expect(done).toBe(true);
      expect(events).toHaveLength(PIECES.length + 2);
      for (const event of events) {
        expect(event).toEqual(
          expect.objectContaining({
            object: 'chat.completion.chunk',
            model: 'gpt-test',
            system_fingerprint: 'fp_mock',
          }),
        );
        expect(event.id).toBe(events[0].id);
        expect(event).not.toHaveProperty('usage');
      }
      expect(events[0].choices).toEqual([
        { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      ]);
      expect(events.slice(1, -1).map(contentOf)).toEqual(PIECES);
      expect(events[events.length - 1].choices).toEqual([
        { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' },
      ]);
    });

    it('should send a usage chunk when stream_options.include_usage is set', async () => {
      const response = await chat({ stream: true, stream_options: { include_usage: true }, max_tokens: 3 });
      const { chunks: events, done } = parseEvents(await response.text());
      expect(done).toBe(true);
      const usageEvent = events.pop()!;
      expect(usageEvent.choices).toEqual([]);
      expect(usageEvent.usage).toEqual({ prompt_tokens: 8, completion_tokens: 3, total_tokens: 11 });
      expect(events.every((event) => event.usage === null)).toBe(true);
      expect(events[events.length - 1].choices[0].finish_reason).toBe('length');
    });

    it('should not send usage when omit_usage is set', async () => {
      const body = { stream: true, stream_options: { include_usage: true }, mock: { omit_usage: true } };
      const { chunks, done } = parseEvents(await (await chat(body)).text());
      expect(done).toBe(true);
      expect(chunks.some((chunk) => 'usage' in chunk)).toBe(false);
    });

    it('should stream each choice in turn when n > 1', async () => {
      const { chunks, done } = parseEvents(await (await chat({ stream: true, n: 2, mock: { reply: 'a b' } })).text());
      expect(done).toBe(true);
      expect(chunks.map((chunk) => [chunk.choices[0].index, contentOf(chunk) ?? null])).toEqual([
        [0, ''],
        [0, 'a '],
        [0, 'b'],
        [0, null],
        [1, ''],
        [1, 'a '],
        [1, 'b'],
        [1, null],
      ]);
    });

    it('should wait chunk_delay_ms between chunks', async () => {
      const started = Date.now();
      const response = await chat({ stream: true, mock: { reply: 'a b c', chunk_delay_ms: 30 } });
      const { chunks, done } = parseEvents(await response.text());
      expect(done).toBe(true);
      expect(chunks).toHaveLength(5);
      expect(Date.now() - started).toBeGreaterThanOrEqual(5 * 30 - 5);
    });

    it('should destroy the socket after break_after content chunks', async () => {
      const response = await chat({ stream: true, mock: { break_after: 2 } });
      expect(response.status).toBe(200);
      const { text, error } = await readUntilError(response);
      expect(error).toBeDefined();
      const { chunks, done } = parseEvents(text);
      expect(done).toBe(false);
      expect(chunks.map(contentOf)).toEqual(['', 'Hello ', 'from ']);
    });

    it('should break even when break_after exceeds the reply length', async () => {
      const { text, error } = await readUntilError(await chat({ stream: true, mock: { break_after: 99 } }));
      expect(error).toBeDefined();
      const { chunks, done } = parseEvents(text);
      expect(done).toBe(false);
      expect(chunks.map(contentOf)).toEqual(['', ...PIECES]);
    });

    it('should stream stall_after content chunks, then stay silent on an open connection', async () => {
      const response = await chat({ stream: true, mock: { stall_after: 2 } });
      const reader = response.body!.getReader();
      let text = '';
      const deadline = Date.now() + 300;
      while (Date.now() < deadline) {
        const read = await Promise.race([
          reader.read(),
          new Promise<null>((resolve) => setTimeout(() => resolve(null), deadline - Date.now())),
        ]);
        if (read === null || read.done) {
          expect(read).toBeNull();
          break;
        }
        text += new TextDecoder().decode(read.value);
      }
      await reader.cancel();
      const { chunks, done } = parseEvents(text);
      expect(done).toBe(false);
      expect(chunks.map(contentOf)).toEqual(['', ...PIECES.slice(0, 2)]);
    });

    it('should stream a garbage event when asked', async () => {
      const response = await chat({ stream: true, mock: { garbage: true } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      expect(await response.text()).toBe('data: {not json\n\n');
    });

    it('should keep serving after a client disconnects mid-stream', async () => {
      const controller = new AbortController();
      const body = { model: 'gpt-test', messages: MESSAGES, stream: true, mock: { chunk_delay_ms: 50 } };
      const response = await post(body, '/v1/chat/completions', { signal: controller.signal });
      await response.body!.getReader().read();
      controller.abort();
      const next = await chat();
      expect(next.status).toBe(200);
    });
  });

  describe('embeddings', () => {
    it('should answer OpenAI embeddings: one deterministic vector per input, and the usage', async () => {
      const response = await post({ model: 'embed-test', input: ['one two', 'three'] }, '/v1/embeddings');

      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toEqual({
        object: 'list',
        model: 'embed-test',
        data: [
          { object: 'embedding', index: 0, embedding: mockEmbedding('one two') },
          { object: 'embedding', index: 1, embedding: mockEmbedding('three') },
        ],
        usage: { prompt_tokens: 3, total_tokens: 3 },
      });
      expect(mockEmbedding('one two')).toHaveLength(MOCK_EMBEDDING_DIMENSIONS);
      expect(mockEmbedding('one two')).not.toEqual(mockEmbedding('three'));
    });

    it('should count token arrays by their length, honour dimensions, and answer base64 float32', async () => {
      const body = { model: 'e', input: [[1, 2, 3]], dimensions: 4, encoding_format: 'base64' };

      const answer = (await (await post(body, '/v1/embeddings')).json()) as {
        data: { embedding: string }[];
        usage: { prompt_tokens: number };
      };

      const bytes = Buffer.from(answer.data[0].embedding, 'base64');
      const decoded = Array.from({ length: bytes.length / 4 }, (_, k) => bytes.readFloatLE(k * 4));
      expect(decoded).toEqual(mockEmbedding([1, 2, 3], 4));
      expect(answer.usage.prompt_tokens).toBe(3);
      expect(float32Base64(mockEmbedding([1, 2, 3], 4))).toBe(answer.data[0].embedding);
    });

    it('should refuse an input that is not one of the four shapes', async () => {
      const response = await post({ model: 'e', input: [{}] }, '/v1/embeddings');

      expect(response.status).toBe(400);
    });

    it('should answer Gemini batchEmbedContents with values only, no usage', async () => {
      const request = (text: string) => ({
        model: 'models/g',
        content: { parts: [{ text }] },
        outputDimensionality: 3,
      });
      const response = await post({ requests: [request('a b'), request('c')] }, '/v1beta/models/g:batchEmbedContents', {
        headers: { 'x-goog-api-key': 'k', 'content-type': 'application/json' },
      });

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        embeddings: [{ values: mockEmbedding('a b', 3) }, { values: mockEmbedding('c', 3) }],
      });
    });
  });

  describe('legacy text completions', () => {
    const sse = async (response: Response) =>
      (await response.text())
        .split('\n\n')
        .filter((event) => event.startsWith('data: '))
        .map((event) => event.slice('data: '.length));

    it('should answer text_completion choices per prompt and n, with usage counting prompts and suffix', async () => {
      const body = { model: 'instruct', prompt: ['one two', 'three'], suffix: 'end', n: 2, mock: { reply: 'a b c' } };
      const response = await post(body, '/v1/completions');

      expect(response.status).toBe(200);
      const answer = (await response.json()) as Record<string, unknown> & { choices: Record<string, unknown>[] };
      expect(answer).toMatchObject({
        object: 'text_completion',
        model: 'instruct',
        usage: { prompt_tokens: 4, completion_tokens: 12, total_tokens: 16 },
      });
      expect(answer.choices.map((choice) => [choice.index, choice.text, choice.finish_reason])).toEqual(
        [0, 1, 2, 3].map((index) => [index, 'a b c', 'stop']),
      );
    });

    it('should cut at max_tokens, count token prompts by length, and refuse a missing prompt', async () => {
      const answer = (await (
        await post({ model: 'i', prompt: [1, 2, 3], max_tokens: 2, mock: { reply: 'a b c' } }, '/v1/completions')
      ).json()) as { choices: { text: string; finish_reason: string }[]; usage: Record<string, number> };

      expect(answer.choices[0]).toMatchObject({ text: 'a b ', finish_reason: 'length' });
      expect(answer.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2 });
      expect((await post({ model: 'i' }, '/v1/completions')).status).toBe(400);
    });

    it('should stream text_completion chunks, then the usage chunk when asked, then [DONE]', async () => {
      const body = { model: 'i', prompt: 'x y', stream: true, stream_options: { include_usage: true } };
      const events = await sse(await post({ ...body, mock: { reply: 'a b' } }, '/v1/completions'));

      expect(events.at(-1)).toBe('[DONE]');
      const chunks = events.slice(0, -1).map((data) => JSON.parse(data) as Record<string, unknown>);
      expect(chunks.every((chunk) => chunk.object === 'text_completion')).toBe(true);
      expect(chunks.map((chunk) => (chunk.choices as { text: string }[])[0]?.text)).toEqual(['a ', 'b', '', undefined]);
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 2 } });
    });

    it('should break a stream after break_after pieces, without [DONE]', async () => {
      const body = { model: 'i', prompt: 'x', stream: true, mock: { reply: 'a b c', break_after: 1 } };
      const events = await sse(await post(body, '/v1/completions')).catch(() => ['broken']);

      expect(events).not.toContain('[DONE]');
    });
  });

  describe('tool calls and JSON output', () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'weather',
          parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } },
        },
      },
    ];
    const ARGUMENTS = '{"city":"mock","days":1}';

    it('should call the forced tool with arguments fitting its schema, one token per 8-character piece', async () => {
      const body = (await (await chat({ tools, tool_choice: 'required' })).json()) as any;

      expect(body.choices[0]).toMatchObject({
        finish_reason: 'tool_calls',
        message: {
          content: null,
          tool_calls: [{ type: 'function', function: { name: 'weather', arguments: ARGUMENTS } }],
        },
      });
      expect(body.usage.completion_tokens).toBe(Math.ceil(ARGUMENTS.length / 8));
    });

    it('should stream the tool call: its id and name first, then the argument pieces', async () => {
      const response = await chat({
        tools,
        tool_choice: { type: 'function', function: { name: 'weather' } },
        stream: true,
      });
      const { chunks, done } = parseEvents(await response.text());

      const calls = chunks.map((chunk) => (chunk.choices[0]?.delta as any)?.tool_calls?.[0]);
      expect(calls[0]).toMatchObject({
        index: 0,
        id: expect.any(String),
        function: { name: 'weather', arguments: '' },
      });
      expect(calls.slice(1, -1).map((call) => call.function.arguments)).toEqual(mockArgumentPieces(ARGUMENTS));
      expect(chunks.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
      expect(done).toBe(true);
    });

    it('should reply with text when the tool is not forced', async () => {
      const body = await json(await chat({ tools, tool_choice: 'auto' }));

      expect(body.choices[0].message?.content).toBe(PIECES.join(''));
    });

    it('should answer response_format json_schema with a value fitting the schema', async () => {
      const schema = {
        type: 'object',
        properties: { mood: { type: 'string', enum: ['happy', 'sad'] }, ok: { type: 'boolean' } },
      };
      const body = await json(
        await chat({ response_format: { type: 'json_schema', json_schema: { name: 'm', schema } } }),
      );

      expect(JSON.parse(body.choices[0].message!.content)).toEqual({ mood: 'happy', ok: true });
      expect(mockValueFor(schema)).toEqual({ mood: 'happy', ok: true });
    });
  });

  describe("Anthropic's token count", () => {
    const count = (headers: Record<string, string>, body: unknown) =>
      fetch(`${upstream.url}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const anthropic = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' };
    const request = { model: 'claude-test', system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello' }] };

    it('should count what a message of the same body is billed as input', async () => {
      const counted = await count(anthropic, request);
      const message = await fetch(`${upstream.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...anthropic },
        body: JSON.stringify({ ...request, max_tokens: 10 }),
      });

      expect(counted.status).toBe(200);
      const { input_tokens } = (await counted.json()) as { input_tokens: number };
      expect(input_tokens).toBe(3 + (3 + 2) + (3 + 2));
      expect(((await message.json()) as { usage: { input_tokens: number } }).usage.input_tokens).toBe(input_tokens);
    });

    it('should refuse, as Anthropic does, a missing key or version and a body with max_tokens', async () => {
      expect((await count({ 'anthropic-version': '2023-06-01' }, request)).status).toBe(401);
      expect((await count({ 'x-api-key': 'k' }, request)).status).toBe(400);
      const refused = await count(anthropic, { ...request, max_tokens: 10 });

      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'max_tokens: Extra inputs are not permitted' },
      });
    });
  });

  describe('usage details asked for in the prompt', () => {
    const marker = '[mock-usage cached=40 cache_write=20 reasoning=30]';
    const asking = [{ role: 'user', content: `Say hello ${marker}` }];
    // 3 + 3 + one per word ("Say", "hello" and the marker's four).
    const counted = 3 + 3 + 6;
    const postAs = (path: string, headers: Record<string, string>, body: unknown) =>
      fetch(`${upstream.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });

    it('should report cached and reasoning tokens in OpenAI usage, on top of the counted prompt and reply', async () => {
      const body = await json(await chat({ messages: asking }));

      expect(body.usage).toEqual({
        prompt_tokens: counted + 40,
        completion_tokens: PIECES.length + 30,
        total_tokens: counted + 40 + PIECES.length + 30,
        prompt_tokens_details: { cached_tokens: 40 },
        completion_tokens_details: { reasoning_tokens: 30 },
      });
    });

    it("should report the cache's reads and writes apart from Anthropic's input_tokens", async () => {
      const response = await postAs('/v1/messages', { 'x-api-key': 'k' }, { max_tokens: 100, messages: asking });

      expect(((await response.json()) as { usage: unknown }).usage).toEqual({
        input_tokens: counted,
        cache_creation_input_tokens: 20,
        cache_read_input_tokens: 40,
        output_tokens: PIECES.length + 30,
      });
    });

    it("should report Gemini's cached content inside the prompt and its thoughts apart from the candidates", async () => {
      const contents = [{ role: 'user', parts: [{ text: `Say hello ${marker}` }] }];
      const response = await postAs('/v1beta/models/g:generateContent', { 'x-goog-api-key': 'k' }, { contents });

      expect(((await response.json()) as { usageMetadata: unknown }).usageMetadata).toEqual({
        promptTokenCount: counted + 40,
        candidatesTokenCount: PIECES.length,
        cachedContentTokenCount: 40,
        thoughtsTokenCount: 30,
        totalTokenCount: counted + 40 + PIECES.length + 30,
      });
    });

    it('should report no details when the prompt does not ask', async () => {
      const body = await json(await chat());

      expect(Object.keys(body.usage!).sort()).toEqual(['completion_tokens', 'prompt_tokens', 'total_tokens']);
    });
  });
});
