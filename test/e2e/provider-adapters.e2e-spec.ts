import { parseEventStream, TestGateway } from 'test/support/gateway';

// Translated requests carry only what the provider understands, so the mock's `mock` switches do
// not reach it: it answers with its default reply.
const REPLY = 'Hello from the mock upstream.';
const messages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Say hello' },
];

describe('Anthropic and Gemini channels behind the OpenAI wire format', () => {
  let gateway: TestGateway;
  let claude: string;
  let gemini: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    await gateway.addChannel('anthropic-mock', {
      type: 'anthropic',
      baseUrl: `${gateway.mock.url}/v1`,
      apiKey: 'anthropic-upstream-key-000',
    });
    await gateway.addChannel('gemini-mock', {
      type: 'gemini',
      baseUrl: `${gateway.mock.url}/v1beta`,
      apiKey: 'gemini-upstream-key-00000',
    });
    claude = await gateway.addModel({
      maxOutputTokens: 512,
      routes: [{ channelId: 'anthropic-mock', upstreamModel: 'claude-mock' }],
    });
    gemini = await gateway.addModel({ routes: [{ channelId: 'gemini-mock', upstreamModel: 'gemini-mock' }] });
  });
  afterAll(() => gateway.close());

  const lastUpstreamRequest = () => gateway.mock.requests.at(-1)!;

  describe('anthropic', () => {
    it('should translate the request: system apart, max_tokens required, the channel key in x-api-key', async () => {
      const customer = await gateway.newCustomer();
      const response = await gateway.chat(customer.key, {
        model: claude,
        messages,
        temperature: 1.5,
      });
      expect(response.status).toBe(200);
      const sent = lastUpstreamRequest();
      expect(sent.path).toBe('/v1/messages');
      expect(sent.headers['x-api-key']).toBe('anthropic-upstream-key-000');
      expect(sent.headers['anthropic-version']).toBe('2023-06-01');
      expect(sent.headers.authorization).toBeUndefined();
      expect(sent.rawBody).not.toContain(customer.key);
      expect(sent.body).toMatchObject({
        model: 'claude-mock',
        system: 'Be brief.',
        max_tokens: 512,
        temperature: 1,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
      });
    });

    it('should answer a chat.completion with our model id, the text and the provider usage', async () => {
      const customer = await gateway.newCustomer();
      const response = await gateway.chat(customer.key, { model: claude, messages });
      expect(response.body).toMatchObject({
        object: 'chat.completion',
        model: claude,
        choices: [{ index: 0, message: { role: 'assistant', content: REPLY }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 },
      });
    });

    it('should stream SPEC-shaped chunks ending with [DONE], with usage when asked', async () => {
      const customer = await gateway.newCustomer();
      const response = await gateway.chat(customer.key, {
        model: claude,
        messages,
        stream: true,
        stream_options: { include_usage: true },
      });
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(true);
      expect(chunks[0].choices[0]).toMatchObject({ delta: { role: 'assistant', content: '' }, finish_reason: null });
      const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
      expect(text).toBe(REPLY);
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === claude)).toBe(true);
      expect(chunks.at(-2).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 13, completion_tokens: 5 } });
    });

    it('should report max_tokens truncation as finish_reason length', async () => {
      const customer = await gateway.newCustomer();
      const response = await gateway.chat(customer.key, {
        model: claude,
        messages,
        max_tokens: 2,
      });
      expect(response.body.choices[0]).toMatchObject({
        finish_reason: 'length',
        message: { content: 'Hello from ' },
      });
    });

    it('should refuse n > 1, which Anthropic cannot serve, as a 400 naming n', async () => {
      const customer = await gateway.newCustomer();
      const response = await gateway.chat(customer.key, { model: claude, messages, n: 2 });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ param: 'n', type: 'invalid_request_error' });
    });
  });

  describe('gemini', () => {
    it('should translate the request to generateContent with the key in x-goog-api-key', async () => {
      const customer = await gateway.newCustomer();
      const response = await gateway.chat(customer.key, {
        model: gemini,
        messages,
        max_tokens: 50,
      });
      expect(response.status).toBe(200);
      const sent = lastUpstreamRequest();
      expect(sent.path).toBe('/v1beta/models/gemini-mock:generateContent');
      expect(sent.headers['x-goog-api-key']).toBe('gemini-upstream-key-00000');
      expect(sent.body).toMatchObject({
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }],
        generationConfig: { maxOutputTokens: 50, candidateCount: 1 },
      });
      expect(response.body).toMatchObject({
        object: 'chat.completion',
        model: gemini,
        choices: [{ message: { role: 'assistant', content: REPLY }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 },
      });
    });

    it('should stream from streamGenerateContent as chunks ending with [DONE]', async () => {
      const customer = await gateway.newCustomer();
      const response = await gateway.chat(customer.key, {
        model: gemini,
        messages,
        stream: true,
      });
      expect(lastUpstreamRequest().path).toBe('/v1beta/models/gemini-mock:streamGenerateContent?alt=sse');
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(true);
      expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(REPLY);
      expect(chunks.at(-1).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
      expect(response.text).not.toContain('"usage"');
    });
  });
});
