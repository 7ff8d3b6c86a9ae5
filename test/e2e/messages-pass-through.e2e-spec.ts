import Anthropic from '@anthropic-ai/sdk';
import { formatUsd } from 'src/common/money/money';
import { countCompletionTokens, estimatePromptTokens } from 'src/modules/billing/token-estimator';
import { Bill, Books, MOCK_DEFAULT_REPLY, mockPieces, usd } from 'test/e2e/billing-helpers';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';
import { MOCK_SIGNATURE, mockThinkingPieces } from 'tools/mock-upstream/mock-anthropic-native';

// Prices whose products are not whole nano-dollars, so every part goes through the one round-up.
const PRICES = {
  inputPrice: '1.234567',
  cachedInputPrice: '0.123457',
  cacheWriteInputPrice: '1.543211',
  outputPrice: '3.000001',
};
const THOUGHT = 'First I weigh the question, then I answer it.';
// The mock reports these cache reads and writes on top of the prompt it counts (mock-usage-details.ts).
const CACHE_MARKER = '[mock-usage cached=40 cache_write=20]';
const UPSTREAM_MODEL = 'claude-upstream-model';
const CHANNEL_KEY = 'anthropic-channel-key-0000';

interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** Worked out by hand from Anthropic's usage: each part × its price per million tokens, rounded up once. */
function costOf(usage: AnthropicUsage): bigint {
  const at = (tokens: number, price: string) => BigInt(tokens) * usd(price);
  const scaled =
    at(usage.input_tokens, PRICES.inputPrice) +
    at(usage.cache_read_input_tokens ?? 0, PRICES.cachedInputPrice) +
    at(usage.cache_creation_input_tokens ?? 0, PRICES.cacheWriteInputPrice) +
    at(usage.output_tokens, PRICES.outputPrice);
  return (scaled + 999_999n) / 1_000_000n;
}

/** The named events of an SSE text, in order, with their JSON data. */
function sseEvents(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      return { event: eventLine.slice(7), data: JSON.parse(dataLine.slice(6)) };
    });
}

/**
 * POST /v1/messages to an Anthropic channel: the client's body and headers reach Anthropic as sent (only
 * the model swapped), and Anthropic's answer and named events come back as given, billed to the
 * nano-dollar from its own usage, cache reads and writes included. Other channel types in the same
 * model's routes still get the translated chat request.
 */
describe('Messages passed through to Anthropic channels', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let claude: string;
  let mixed: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    worker = await TestWorker.start();
    books = await Books.open(gateway);
    await gateway.addChannel('pass-anthropic', {
      type: 'anthropic',
      baseUrl: `${gateway.mock.url}/v1`,
      apiKey: CHANNEL_KEY,
    });
    claude = await gateway.addModel({
      ...PRICES,
      maxOutputTokens: 4096,
      routes: [{ channelId: 'pass-anthropic', upstreamModel: UPSTREAM_MODEL }],
    });
    // Nothing listens on port 1: the Anthropic route fails before any byte, the OpenAI one serves.
    await gateway.addChannel('pass-anthropic-down', {
      type: 'anthropic',
      baseUrl: 'http://127.0.0.1:1/v1',
      priority: 10,
    });
    await gateway.addChannel('pass-openai', { type: 'openai', baseUrl: `${gateway.mock.url}/v1` });
    mixed = await gateway.addModel({
      ...PRICES,
      maxOutputTokens: 4096,
      routes: [
        { channelId: 'pass-anthropic-down', upstreamModel: UPSTREAM_MODEL },
        { channelId: 'pass-openai', upstreamModel: 'mock-gpt' },
      ],
    });
  });
  afterEach(() => books.expectBalanced());
  afterAll(async () => {
    await books.close();
    await worker.close();
    await gateway.close();
  });

  const clientOf = (customer: Customer) => new Anthropic({ apiKey: customer.key, baseURL: gateway.url, maxRetries: 0 });

  async function onlyBill(customer: Customer): Promise<Bill> {
    const bills = await books.waitForBills(customer, 1);
    expect(bills).toHaveLength(1);
    await books.waitForNoHolds(customer.accountId);
    return bills[0];
  }

  const expectBilledAs = (bill: Bill, usage: AnthropicUsage) =>
    expect(bill).toMatchObject({
      promptTokens:
        usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
      completionTokens: usage.output_tokens,
      cachedTokens: usage.cache_read_input_tokens ?? 0,
      cacheWriteTokens: usage.cache_creation_input_tokens ?? 0,
      cost: formatUsd(costOf(usage)),
    });

  /** A request using what only Anthropic understands: top_k, thinking, cache_control, metadata, thinking blocks, citations. */
  const nativeRequest = (model: string, extra: Record<string, unknown> = {}) => ({
    model,
    max_tokens: 2048,
    top_k: 7,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    metadata: { user_id: 'end-user-42' },
    system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: 'Hello' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'They greet me.', signature: 'sig-from-before' },
          { type: 'text', text: 'Hi.' },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'document',
            source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' },
            title: 'Facts',
            citations: { enabled: true },
          },
          { type: 'text', text: `Summarise ${CACHE_MARKER}`, cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
      },
    ],
    // The mock's switches: only an untranslated request carries them to its Anthropic dialect.
    mock: { thinking: THOUGHT },
    ...extra,
  });

  it('should send messages.create to Anthropic unchanged but for the model, and bill its cache use exactly', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);
    const body = nativeRequest(claude);

    const { data, response } = await clientOf(customer)
      .messages.create(body as unknown as Anthropic.MessageCreateParamsNonStreaming, {
        headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
      })
      .withResponse();

    const sent = gateway.mock.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.body).toEqual({ ...body, model: UPSTREAM_MODEL });
    expect(sent.headers['x-api-key']).toBe(CHANNEL_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.rawBody).not.toContain(customer.key);
    const outputTokens = mockThinkingPieces(THOUGHT).length + mockPieces().length;
    expect(data).toMatchObject({
      type: 'message',
      model: claude,
      content: [
        { type: 'thinking', thinking: THOUGHT, signature: MOCK_SIGNATURE },
        { type: 'text', text: MOCK_DEFAULT_REPLY },
      ],
      stop_reason: 'end_turn',
      usage: { cache_read_input_tokens: 40, cache_creation_input_tokens: 20, output_tokens: outputTokens },
    });
    const bill = await onlyBill(customer);
    expectBilledAs(bill, data.usage);
    expect(bill.requestId).toBe(response.headers.get('x-request-id'));
    expect(await books.balance(customer)).toBe(before - costOf(data.usage));
  });

  it('should relay messages.stream event by event: thinking deltas, the signature and the final message', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const body = nativeRequest(claude);

    const stream = clientOf(customer).messages.stream(body as unknown as Anthropic.MessageStreamParams);
    const thinking: string[] = [];
    const text: string[] = [];
    stream.on('thinking', (delta) => thinking.push(delta));
    stream.on('text', (delta) => text.push(delta));
    const final = await stream.finalMessage();

    expect(gateway.mock.requests.at(-1)!.body).toEqual({ ...body, model: UPSTREAM_MODEL, stream: true });
    expect(thinking).toEqual(mockThinkingPieces(THOUGHT));
    expect(text.join('')).toBe(MOCK_DEFAULT_REPLY);
    expect(final).toMatchObject({
      model: claude,
      content: [
        { type: 'thinking', thinking: THOUGHT, signature: MOCK_SIGNATURE },
        { type: 'text', text: MOCK_DEFAULT_REPLY },
      ],
      stop_reason: 'end_turn',
      usage: { cache_read_input_tokens: 40, cache_creation_input_tokens: 20 },
    });
    expect(final.usage.output_tokens).toBe(mockThinkingPieces(THOUGHT).length + mockPieces().length);
    expectBilledAs(await onlyBill(customer), final.usage);
  });

  it('should end a stream Anthropic cuts with an error event, and bill the delivered part as chat does', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const input = 'Tell me a story';
    // The thinking deltas, its signature, then two text deltas.
    const cutAfter = mockThinkingPieces(THOUGHT).length + 1 + 2;

    const response = await gateway.call('POST', '/v1/messages', {
      token: customer.key,
      body: {
        model: claude,
        max_tokens: 200,
        messages: [{ role: 'user', content: input }],
        stream: true,
        mock: { thinking: THOUGHT, break_after: cutAfter },
      },
    });

    expect(response.status).toBe(200);
    const events = sseEvents(response.text);
    expect(events[0]).toMatchObject({ event: 'message_start', data: { message: { model: claude } } });
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: expect.any(String) } },
    });
    expect(events.map((event) => event.event)).not.toContain('message_stop');
    const delivered = events.flatMap((event) =>
      event.event === 'content_block_delta' && event.data.delta.type !== 'signature_delta'
        ? [(event.data.delta.thinking ?? event.data.delta.text) as string]
        : [],
    );
    expect(delivered).toEqual([...mockThinkingPieces(THOUGHT), ...mockPieces().slice(0, 2)]);
    // No usage came (message_delta never did): the held prompt and the delivered text, as on the chat route.
    const bill = await onlyBill(customer);
    expect(bill).toMatchObject({
      promptTokens: estimatePromptTokens([{ role: 'user', content: input }]),
      completionTokens: countCompletionTokens(delivered.join('')),
    });
  });

  it('should relay Anthropic’s own error event once, and bill what was delivered before it', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const input = 'Tell me a story';

    const response = await gateway.call('POST', '/v1/messages', {
      token: customer.key,
      body: {
        model: claude,
        max_tokens: 200,
        messages: [{ role: 'user', content: input }],
        stream: true,
        mock: { error_after: 3 },
      },
    });

    expect(response.status).toBe(200);
    const events = sseEvents(response.text);
    expect(events.filter((event) => event.event === 'error')).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
    ]);
    expect(events.at(-1)!.event).toBe('error');
    const delivered = mockPieces().slice(0, 3);
    const bill = await onlyBill(customer);
    expect(bill).toMatchObject({
      promptTokens: estimatePromptTokens([{ role: 'user', content: input }]),
      completionTokens: countCompletionTokens(delivered.join('')),
    });
  });

  it('should pipe each event as it arrives rather than the stream whole', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const delayMs = 100;

    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': customer.key },
      body: JSON.stringify({
        model: claude,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
        mock: { event_delay_ms: delayMs },
      }),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let firstAt: number | null = null;
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      firstAt ??= Date.now();
      text += decoder.decode(read.value, { stream: true });
    }
    const endedAt = Date.now();

    const events = sseEvents(text);
    expect(events[0].event).toBe('message_start');
    expect(events.at(-1)!.event).toBe('message_stop');
    // The first event reached the client while the upstream was still pausing between the others.
    expect(endedAt - firstAt!).toBeGreaterThanOrEqual(((events.length - 1) * delayMs) / 2);
    await onlyBill(customer);
  });

  it('should fail over from a failing Anthropic route to an OpenAI one, which gets the translated request', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = gateway.mock.requests.length;

    const request = {
      model: mixed,
      max_tokens: 200,
      top_k: 5,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello' }],
    };

    const answer = await clientOf(customer).messages.create(request as Anthropic.MessageCreateParamsNonStreaming);

    const sent = gateway.mock.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0].path).toBe('/v1/chat/completions');
    expect(sent[0].body).toMatchObject({
      model: 'mock-gpt',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
    });
    expect(sent[0].body).not.toHaveProperty('top_k');
    expect(answer).toMatchObject({ model: mixed, content: [{ type: 'text', text: MOCK_DEFAULT_REPLY }] });
    const bill = await onlyBill(customer);
    expect(bill.completionTokens).toBe(mockPieces().length);
  });

  it('should send Anthropic the version its SDKs default to when the client named none', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const response = await gateway.raw(
      'POST',
      '/v1/messages',
      { 'content-type': 'application/json', 'x-api-key': customer.key },
      JSON.stringify({ model: claude, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
    );

    expect(response.status).toBe(200);
    const sent = gateway.mock.requests.at(-1)!;
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['anthropic-beta']).toBeUndefined();
    expect(response.body).toMatchObject({ type: 'message', model: claude, content: [{ type: 'text' }] });
    await onlyBill(customer);
  });

  it('should refuse a malformed anthropic-beta header with a 400 naming it, before any upstream request', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = gateway.mock.requests.length;

    const response = await gateway.raw(
      'POST',
      '/v1/messages',
      { 'content-type': 'application/json', 'x-api-key': customer.key, 'anthropic-beta': 'a b;c' },
      JSON.stringify({ model: claude, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
    );

    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/^anthropic-beta:/) },
    });
    expect(gateway.mock.requests.length).toBe(before);
  });
});
