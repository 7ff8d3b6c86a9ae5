import Anthropic, {
  AuthenticationError,
  BadRequestError,
  PermissionDeniedError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import { formatUsd } from 'src/common/money/money';
import { Prices } from 'src/modules/billing/pricing';
import { countCompletionTokens, estimatePromptTokens } from 'src/modules/billing/token-estimator';
import {
  BillingWorld,
  Books,
  costOf,
  MOCK_DEFAULT_REPLY,
  mockPieces,
  mockUsage,
  openBillingWorld,
  Usage,
} from 'test/e2e/billing-helpers';
import { sendLargeBody } from 'test/e2e/edge-helpers';
import { Customer, TestGateway } from 'test/support/gateway';
import { mockArgumentPieces } from 'tools/mock-upstream/mock-upstream.server';

// Prices whose products are not whole nano-dollars, so every cost goes through the round-up.
const INPUT_PRICE = '1.234567';
const OUTPUT_PRICE = '3.000001';
const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'unit'],
  },
};
/** What the mock answers a forced call of WEATHER_TOOL with: a value fitting its schema. */
const WEATHER_ARGUMENTS = '{"city":"mock","unit":"celsius"}';
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

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
 * POST /v1/messages through the official `@anthropic-ai/sdk`, pointed only at the gateway's root:
 * messages, tool turns, images, streams and their cuts, Anthropic-shaped errors, and bills exactly
 * equal to the equivalent chat request's.
 */
describe("Anthropic's Messages API through the official @anthropic-ai/sdk", () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  let model: string;
  let prices: Prices;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE, { maxOutputTokens: 1000, vision: true });
    ({ gateway, books, model, prices } = world);
  });
  afterEach(() => books.expectBalanced());
  afterAll(() => world.close());

  const clientOf = (customer: Customer | { key: string }) =>
    new Anthropic({ apiKey: customer.key, baseURL: gateway.url, maxRetries: 0 });

  async function onlyBill(customer: Customer) {
    const bills = await books.waitForBills(customer, 1);
    expect(bills).toHaveLength(1);
    await books.waitForNoHolds(customer.accountId);
    return bills[0];
  }

  /** The bill of the same request sent as chat by another fresh customer: what the Messages bill must equal. */
  async function chatBillOf(body: Record<string, unknown>) {
    const other = await gateway.newCustomer({ balance: '10' });
    const response = await gateway.chat(other.key, body);
    expect(response.status).toBe(200);
    return onlyBill(other);
  }

  const expectBilled = (bill: { promptTokens: number; completionTokens: number; cost: string }, usage: Usage) =>
    expect(bill).toMatchObject({
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cost: formatUsd(costOf(prices, usage)),
    });

  it('should answer messages.create with a text block, usage, and a bill equal to the chat request’s', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);

    const { data, response } = await clientOf(customer)
      .messages.create({
        model,
        max_tokens: 200,
        system: 'You are terse.',
        messages: [{ role: 'user', content: 'Say hello to the world' }],
        metadata: { user_id: 'end-user-7' },
      })
      .withResponse();

    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello to the world' },
    ];
    const usage = mockUsage(messages);
    expect(data).toMatchObject({
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: MOCK_DEFAULT_REPLY }],
      stop_reason: 'end_turn',
      usage: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens },
    });
    expect(data.id).toMatch(/^msg_/);
    expect(gateway.mock.requests.at(-1)!.body).toMatchObject({ messages, max_tokens: 200, user: 'end-user-7' });
    const bill = await onlyBill(customer);
    expectBilled(bill, usage);
    expect(bill.requestId).toBe(response.headers.get('x-request-id'));
    expect(await books.balance(customer)).toBe(before - costOf(prices, usage));
    const chatBill = await chatBillOf({ model, messages, max_tokens: 200 });
    expect(chatBill.cost).toBe(bill.cost);
  });

  it('should answer a forced tool with a tool_use block, and take its tool_result back in the next turn', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const client = clientOf(customer);
    const question = { role: 'user' as const, content: 'What is the weather in Paris?' };

    const first = await client.messages.create({
      model,
      max_tokens: 200,
      messages: [question],
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });

    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'get_weather', input: JSON.parse(WEATHER_ARGUMENTS) },
    ]);
    expect(first.usage.output_tokens).toBe(mockArgumentPieces(WEATHER_ARGUMENTS).length);
    const toolUse = first.content[0] as Anthropic.ToolUseBlock;

    const second = await client.messages.create({
      model,
      max_tokens: 200,
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '21 degrees and sunny' }] },
      ],
      tools: [WEATHER_TOOL],
    });

    expect(second.content).toEqual([{ type: 'text', text: MOCK_DEFAULT_REPLY }]);
    const sent = gateway.mock.requests.at(-1)!.body as { messages: unknown[]; tools: unknown[] };
    expect(sent.messages).toEqual([
      question,
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: toolUse.id, type: 'function', function: { name: 'get_weather', arguments: WEATHER_ARGUMENTS } },
        ],
      },
      { role: 'tool', tool_call_id: toolUse.id, content: '21 degrees and sunny' },
    ]);
    expect(sent.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.input_schema },
      },
    ]);
  });

  it('should relay base64 and url images as image parts, billed as the chat request with them', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    await clientOf(customer).messages.create({
      model,
      max_tokens: 200,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL_PNG } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
            { type: 'text', text: 'What is in these?' },
          ],
        },
      ],
    });

    const messages = [
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_PNG}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'text', text: 'What is in these?' },
        ],
      },
    ];
    expect(gateway.mock.requests.at(-1)!.body).toMatchObject({ messages });
    const bill = await onlyBill(customer);
    const chatBill = await chatBillOf({ model, messages, max_tokens: 200 });
    expect(bill.promptTokens).toBe(chatBill.promptTokens);
    expect(bill.cost).toBe(chatBill.cost);
  });

  it('should stream text deltas with messages.stream, end with usage, and bill it as the chat stream', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const stream = clientOf(customer).messages.stream({
      model,
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Say hello' }],
    });

    const types: string[] = [];
    const deltas: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    stream.on('text', (delta) => deltas.push(delta));
    const final = await stream.finalMessage();

    expect([...new Set(types)]).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(deltas).toEqual(mockPieces());
    const usage = mockUsage([{ role: 'user', content: 'Say hello' }]);
    expect(final).toMatchObject({
      content: [{ type: 'text', text: MOCK_DEFAULT_REPLY }],
      stop_reason: 'end_turn',
      usage: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens },
    });
    const bill = await onlyBill(customer);
    expectBilled(bill, usage);
    const chatBill = await chatBillOf({
      model,
      messages: [{ role: 'user', content: 'Say hello' }],
      max_tokens: 200,
      stream: true,
    });
    expect(chatBill.cost).toBe(bill.cost);
  });

  it('should stream tool input as input_json_delta events, the final message holding the parsed input', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const stream = clientOf(customer).messages.stream({
      model,
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'any' },
    });

    const partials: string[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') {
        partials.push(event.delta.partial_json);
      }
    });
    const final = await stream.finalMessage();

    expect(partials).toEqual(mockArgumentPieces(WEATHER_ARGUMENTS));
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'get_weather', input: JSON.parse(WEATHER_ARGUMENTS) },
    ]);
  });

  it('should end a stream the upstream cuts with an error event, and bill the delivered part as chat does', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const input = 'Tell me a story';

    // The mock's switch, relayed unchanged as any unknown field is.
    const response = await gateway.call('POST', '/v1/messages', {
      token: customer.key,
      body: {
        model,
        max_tokens: 200,
        messages: [{ role: 'user', content: input }],
        stream: true,
        mock: { break_after: 2 },
      },
    });

    expect(response.status).toBe(200);
    const events = sseEvents(response.text);
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: expect.any(String) } },
    });
    expect(events.map((event) => event.event)).not.toContain('message_stop');
    const delivered = events.flatMap((event) =>
      event.event === 'content_block_delta' ? [event.data.delta.text as string] : [],
    );
    expect(delivered).toEqual(mockPieces().slice(0, 2));
    const messages = [{ role: 'user', content: input }];
    const bill = await onlyBill(customer);
    expectBilled(bill, {
      promptTokens: estimatePromptTokens(messages),
      completionTokens: countCompletionTokens(delivered.join('')),
    });
    const chatBill = await chatBillOf({ model, messages, max_tokens: 200, stream: true, mock: { break_after: 2 } });
    expect(chatBill.cost).toBe(bill.cost);
  });

  it.each([
    ['anthropic', 'v1'],
    ['gemini', 'v1beta'],
  ] as const)('should serve the same request through a %s channel, answering and streaming', async (type, prefix) => {
    const channelId = `ch-${type}-messages`;
    await gateway.addChannel(channelId, { type, baseUrl: `${gateway.mock.url}/${prefix}` });
    const translated = await gateway.addModel({
      inputPrice: INPUT_PRICE,
      outputPrice: OUTPUT_PRICE,
      routes: [{ channelId, upstreamModel: `${type}-model` }],
    });
    const customer = await gateway.newCustomer({ balance: '10' });
    const client = clientOf(customer);
    const request = {
      model: translated,
      max_tokens: 200,
      system: 'Be brief.',
      messages: [{ role: 'user' as const, content: 'Say hello' }],
    };

    const answer = await client.messages.create(request);
    const stream = client.messages.stream(request);
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const streamed = await stream.finalMessage();

    expect(answer).toMatchObject({ content: [{ type: 'text', text: MOCK_DEFAULT_REPLY }], stop_reason: 'end_turn' });
    expect(answer.usage.output_tokens).toBe(mockPieces().length);
    expect(deltas.join('')).toBe(MOCK_DEFAULT_REPLY);
    expect(streamed).toMatchObject({ content: [{ type: 'text', text: MOCK_DEFAULT_REPLY }], stop_reason: 'end_turn' });
    expect(streamed.usage.output_tokens).toBe(mockPieces().length);
    const bills = await books.waitForBills(customer, 2);
    expect(bills.map((bill) => bill.completionTokens)).toEqual([mockPieces().length, mockPieces().length]);
  });

  describe('errors in Anthropic’s shape', () => {
    it('should refuse a bad x-api-key with 401 authentication_error, and leave the chat route’s shape alone', async () => {
      const error = await clientOf({ key: 'sk-not-a-real-key-000000000000000000000000' })
        .messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
        .catch((caught: unknown) => caught);
      const chat = await gateway.chat('sk-not-a-real-key-000000000000000000000000', { model, messages: [] });

      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error).toMatchObject({
        status: 401,
        error: { type: 'error', error: { type: 'authentication_error', message: expect.any(String) } },
      });
      expect(chat.status).toBe(401);
      expect(chat.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    });

    it('should refuse a request without any key in Anthropic’s shape', async () => {
      const body = JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content: 'x'.repeat(100) }] });
      const response = await gateway.raw(
        'POST',
        '/v1/messages',
        { 'content-type': 'application/json', 'content-length': String(body.length) },
        body,
      );

      expect(response.status).toBe(401);
      expect(JSON.parse(response.text)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    });

    it.each([
      ['x-api-key', { 'x-api-key': 'sk-not-a-real-key-0123456789' }],
      ['Authorization', { authorization: 'Bearer sk-not-a-real-key-0123456789' }],
    ])(
      'should refuse a bad key in %s while the client is still sending a large body',
      async (_header, auth) => {
        const exchange = await sendLargeBody(gateway.url, {
          method: 'POST',
          path: '/v1/messages',
          headers: { ...auth, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          // Under the limit, so only the key can refuse it early.
          bodyBytes: 19 * 1024 * 1024,
          stopWhenAnswered: true,
          chunkBytes: 16 * 1024,
          pauseMs: 20,
        });

        expect(exchange.status).toBe(401);
        expect(exchange.body).toEqual({
          type: 'error',
          error: { type: 'authentication_error', message: expect.any(String) },
        });
        // Answered while most of the body was still unsent: the server did not wait for it.
        expect(exchange.sentBeforeAnswer).toBeLessThan(4 * 1024 * 1024);
      },
      60_000,
    );

    it('should refuse a body over the limit with 413 request_too_large', async () => {
      const client = clientOf(await gateway.newCustomer({ balance: '10' }));
      // Over the default BODY_LIMIT_BYTES (20 MiB).
      const content = 'x'.repeat(21 * 1024 * 1024);

      const error = await client.messages
        .create({ model, max_tokens: 10, messages: [{ role: 'user', content }] })
        .catch((caught: unknown) => caught);

      expect(error).toMatchObject({ status: 413, error: { type: 'error', error: { type: 'request_too_large' } } });
    });

    it('should refuse a customer without balance with 403 permission_error, billing nothing', async () => {
      const customer = await gateway.newCustomer({ balance: '0' });

      const error = await clientOf(customer)
        .messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(PermissionDeniedError);
      expect(error).toMatchObject({ status: 403, error: { error: { type: 'permission_error' } } });
      expect(await books.bills(customer)).toEqual([]);
    });

    it('should refuse past the model’s RPM with 429 rate_limit_error and its headers', async () => {
      const limited = await gateway.addModel({ inputPrice: INPUT_PRICE, outputPrice: OUTPUT_PRICE, rpm: 1 });
      const client = clientOf(await gateway.newCustomer({ balance: '10' }));
      const request = { model: limited, max_tokens: 10, messages: [{ role: 'user' as const, content: 'Hi' }] };

      await client.messages.create(request);
      const error = await client.messages.create(request).catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(RateLimitError);
      expect(error).toMatchObject({ status: 429, error: { error: { type: 'rate_limit_error' } } });
      expect((error as RateLimitError).headers?.get('retry-after')).toMatch(/^\d+$/);
    });

    it('should name the field of a wrong shape in a 400 invalid_request_error', async () => {
      const client = clientOf(await gateway.newCustomer({ balance: '10' }));
      const send = (body: unknown) =>
        client.messages.create(body as Anthropic.MessageCreateParamsNonStreaming).catch((caught: unknown) => caught);

      const badContent = await send({ model, max_tokens: 10, messages: [{ role: 'user', content: 42 }] });
      const noMaxTokens = await send({ model, messages: [{ role: 'user', content: 'Hi' }] });
      const tooMany = await send({ model, max_tokens: 5000, messages: [{ role: 'user', content: 'Hi' }] });
      const badChoice = await send({
        model,
        max_tokens: 10,
        messages: [{ role: 'user', content: 'Hi' }],
        tool_choice: { type: 'maybe' },
      });

      for (const [error, field] of [
        [badContent, 'messages.0.content'],
        [noMaxTokens, 'max_tokens'],
        [tooMany, 'max_tokens'],
        [badChoice, 'tool_choice.type'],
      ] as const) {
        expect(error).toBeInstanceOf(BadRequestError);
        expect(error).toMatchObject({
          status: 400,
          error: { type: 'error', error: { type: 'invalid_request_error' } },
        });
        expect((error as BadRequestError).message).toContain(`${field}:`);
      }
    });

    it('should refuse an embedding model with a 400 naming model', async () => {
      const embedding = await gateway.addModel({ kind: 'embedding' });
      const error = await clientOf(await gateway.newCustomer({ balance: '10' }))
        .messages.create({ model: embedding, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).message).toContain('model:');
    });

    it('should answer an unknown model with 400 naming model, and an upstream failure with api_error', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const unknown = await gateway.call('POST', '/v1/messages', {
        token: customer.key,
        body: { model: 'no-such-model', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] },
      });
      const failed = await gateway.call('POST', '/v1/messages', {
        token: customer.key,
        body: {
          model,
          max_tokens: 10,
          messages: [{ role: 'user', content: 'Hi' }],
          stream: true,
          mock: { status: 500 },
        },
      });

      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(unknown.body.error.message).toMatch(/^model:/);
      expect(failed.status).toBe(500);
      expect(failed.body).toEqual({ type: 'error', error: { type: 'api_error', message: expect.any(String) } });
    });
  });
});
