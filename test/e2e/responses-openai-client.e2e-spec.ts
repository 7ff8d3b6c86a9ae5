import OpenAI from 'openai';
import { formatUsd } from 'src/common/money/money';
import { Prices } from 'src/modules/billing/pricing';
import { countCompletionTokens, estimatePromptTokens } from 'src/modules/billing/token-estimator';
import {
  BillingWorld,
  Books,
  costOf,
  eventually,
  MOCK_DEFAULT_REPLY,
  mockPieces,
  mockUsage,
  openBillingWorld,
  streamUntil,
  Usage,
} from 'test/e2e/billing-helpers';
import { Customer, TestGateway } from 'test/support/gateway';
import { mockArgumentPieces } from 'tools/mock-upstream/mock-upstream.server';

// Prices whose products are not whole nano-dollars, so every cost goes through the round-up.
const INPUT_PRICE = '1.234567';
const OUTPUT_PRICE = '3.000001';
const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
  strict: true,
};
/** What the mock answers a forced call of WEATHER_TOOL with: a value fitting its schema. */
const WEATHER_ARGUMENTS = '{"city":"mock","unit":"celsius"}';

/**
 * POST /v1/responses through the official `openai` client, pointed only at the gateway: answers,
 * tool calls, JSON output, streams and their cuts, and bills exactly equal to the equivalent chat request's.
 */
describe('the Responses API through the official openai client', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  let model: string;
  let prices: Prices;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE, { maxOutputTokens: 1000 });
    ({ gateway, books, model, prices } = world);
  });
  afterEach(() => books.expectBalanced());
  afterAll(() => world.close());

  const clientOf = (customer: Customer) =>
    new OpenAI({ apiKey: customer.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });

  /** The one bill of a fresh customer, once settled, with its exact cost in nano-dollars. */
  async function onlyBill(customer: Customer) {
    const bills = await books.waitForBills(customer, 1);
    expect(bills).toHaveLength(1);
    await books.waitForNoHolds(customer.accountId);
    return bills[0];
  }

  /** Bills of the same request sent as chat by another fresh customer: what the Responses bill must equal. */
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

  it('should answer responses.create with text, usage, and a bill equal to the chat request’s', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);

    const { data, response } = await clientOf(customer)
      .responses.create({ model, instructions: 'You are terse.', input: 'Say hello to the world' })
      .withResponse();

    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello to the world' },
    ];
    const usage = mockUsage(messages);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(data).toMatchObject({
      object: 'response',
      status: 'completed',
      model,
      store: true,
      instructions: 'You are terse.',
      usage: {
        input_tokens: usage.promptTokens,
        output_tokens: usage.completionTokens,
        total_tokens: usage.promptTokens + usage.completionTokens,
      },
    });
    expect(data.id).toMatch(/^resp_/);
    expect(data.output_text).toBe(MOCK_DEFAULT_REPLY);
    expect(data.output).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'assistant',
        content: [expect.objectContaining({ type: 'output_text', text: MOCK_DEFAULT_REPLY })],
      }),
    ]);
    const bill = await onlyBill(customer);
    expectBilled(bill, usage);
    expect(bill.requestId).toBe(response.headers.get('x-request-id'));
    expect(await books.balance(customer)).toBe(before - costOf(prices, usage));
    const chatBill = await chatBillOf({ model, messages });
    expect(chatBill.cost).toBe(bill.cost);
  });

  it('should answer a forced function tool with a function_call, and take its output back in the next turn', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const client = clientOf(customer);

    const first = await client.responses.create({
      model,
      input: 'What is the weather in Paris?',
      tools: [WEATHER_TOOL],
      tool_choice: 'required',
    });

    expect(first.status).toBe('completed');
    expect(first.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        name: 'get_weather',
        arguments: WEATHER_ARGUMENTS,
        call_id: expect.any(String),
        status: 'completed',
      }),
    ]);
    expect(first.usage?.output_tokens).toBe(mockArgumentPieces(WEATHER_ARGUMENTS).length);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;

    const second = await client.responses.create({
      model,
      input: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: '21 degrees and sunny' },
      ],
      tools: [WEATHER_TOOL],
    });

    expect(second.output_text).toBe(MOCK_DEFAULT_REPLY);
    const sent = gateway.mock.requests.at(-1)!.body as { messages: unknown[]; tools: unknown[] };
    expect(sent.messages).toEqual([
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: WEATHER_ARGUMENTS } },
        ],
      },
      { role: 'tool', tool_call_id: call.call_id, content: '21 degrees and sunny' },
    ]);
    expect(sent.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: WEATHER_TOOL.description,
          parameters: WEATHER_TOOL.parameters,
          strict: true,
        },
      },
    ]);
  });

  it('should answer text.format json_schema with JSON that fits the schema', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' }, confidence: { type: 'number' } },
      required: ['answer', 'confidence'],
      additionalProperties: false,
    };

    const response = await clientOf(customer).responses.create({
      model,
      input: 'Answer as JSON',
      text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } },
    });

    expect(JSON.parse(response.output_text)).toEqual({ answer: 'mock', confidence: 1 });
    expect(response.text?.format).toMatchObject({ type: 'json_schema', name: 'answer' });
    expect(gateway.mock.requests.at(-1)!.body).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
  });

  it('should stream text deltas with responses.stream, in order, and bill it as the chat stream', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const stream = clientOf(customer).responses.stream({ model, input: 'Say hello' });

    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
    }
    const final = await stream.finalResponse();

    const types = [...new Set(events.map((event) => event.type))];
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
    expect(deltas).toEqual(mockPieces());
    const usage = mockUsage([{ role: 'user', content: 'Say hello' }]);
    expect(final).toMatchObject({
      status: 'completed',
      output_text: MOCK_DEFAULT_REPLY,
      usage: { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens },
    });
    const bill = await onlyBill(customer);
    expectBilled(bill, usage);
    const chatBill = await chatBillOf({ model, messages: [{ role: 'user', content: 'Say hello' }], stream: true });
    expect(chatBill.cost).toBe(bill.cost);
  });

  it('should stream function-call argument deltas with responses.stream', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const stream = clientOf(customer).responses.stream({
      model,
      input: 'Weather in Paris?',
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', name: 'get_weather' },
    });

    const deltas: string[] = [];
    stream.on('response.function_call_arguments.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();

    expect(deltas).toEqual(mockArgumentPieces(WEATHER_ARGUMENTS));
    expect(final.output).toEqual([
      expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: WEATHER_ARGUMENTS }),
    ]);
  });

  it('should end a stream the upstream cuts with response.failed, and bill the delivered part as chat does', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const input = 'Tell me a story';
    // The mock's switch, relayed unchanged as any unknown field is.
    const body = {
      model,
      input,
      stream: true,
      mock: { break_after: 2 },
    } as OpenAI.Responses.ResponseCreateParamsStreaming;

    const stream = await clientOf(customer).responses.create(body);
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
    }

    const failed = events.at(-1)!;
    expect(failed.type).toBe('response.failed');
    expect(failed).toMatchObject({
      response: { status: 'failed', error: { code: 'upstream_stream_broken', message: expect.any(String) } },
    });
    const delivered = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
    expect(delivered).toEqual(mockPieces().slice(0, 2));
    const messages = [{ role: 'user', content: input }];
    const bill = await onlyBill(customer);
    expectBilled(bill, {
      promptTokens: estimatePromptTokens(messages),
      completionTokens: countCompletionTokens(delivered.join('')),
    });
    const chatBill = await chatBillOf({ model, messages, stream: true, mock: { break_after: 2 } });
    expect(chatBill.cost).toBe(bill.cost);
  });

  it('should bill a stream the client hangs up on like a chat stream: the prompt and what was delivered', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const input = 'Tell me a long story';
    const reply = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
    const pieces = mockPieces(reply);

    const result = await streamUntil(
      gateway,
      customer.key,
      { model, input, stream: true, mock: { chunk_delay_ms: 200, reply } },
      (text) => text.includes('event: response.output_text.delta'),
      '/v1/responses',
    );

    expect(result).toMatchObject({ status: 200, aborted: true });
    const bill = await onlyBill(customer);
    expect(bill.requestId).toBe(result.requestId);
    // The gateway may have written a piece or two more before it saw the hang-up: never fewer than seen.
    const possible = [1, 2, 3].map((count) => countCompletionTokens(pieces.slice(0, count).join('')));
    expect(possible).toContain(bill.completionTokens);
    expectBilled(bill, {
      promptTokens: estimatePromptTokens([{ role: 'user', content: input }]),
      completionTokens: bill.completionTokens,
    });
    const [record] = await books.usageRecords([result.requestId]);
    expect(record.status).toBe('client_aborted');
  });

  it.each([
    ['anthropic', 'v1'],
    ['gemini', 'v1beta'],
  ] as const)('should serve the same request through a %s channel, answering and streaming', async (type, prefix) => {
    const channelId = `ch-${type}-responses`;
    await gateway.addChannel(channelId, { type, baseUrl: `${gateway.mock.url}/${prefix}` });
    const translated = await gateway.addModel({
      inputPrice: INPUT_PRICE,
      outputPrice: OUTPUT_PRICE,
      routes: [{ channelId, upstreamModel: `${type}-model` }],
    });
    const customer = await gateway.newCustomer({ balance: '10' });
    const client = clientOf(customer);

    const answer = await client.responses.create({ model: translated, instructions: 'Be brief.', input: 'Say hello' });
    const stream = client.responses.stream({ model: translated, input: 'Say hello' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const streamed = await stream.finalResponse();

    expect(answer).toMatchObject({ status: 'completed', output_text: MOCK_DEFAULT_REPLY, model: translated });
    expect(answer.usage?.output_tokens).toBe(mockPieces().length);
    expect(deltas.join('')).toBe(MOCK_DEFAULT_REPLY);
    expect(streamed).toMatchObject({ status: 'completed', output_text: MOCK_DEFAULT_REPLY });
    expect(streamed.usage?.output_tokens).toBe(mockPieces().length);
  });

  it('should refuse previous_response_id with a 400 naming it, and bill nothing', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const error = await clientOf(customer)
      .responses.create({ model, input: 'Hi', previous_response_id: 'resp_123' })
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, param: 'previous_response_id', type: 'invalid_request_error' });
    expect(await books.bills(customer)).toEqual([]);
  });

  it('should retrieve a kept answer (output and usage, no input), delete it, and then refuse it', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const client = clientOf(customer);
    const answer = await client.responses.create({ model, input: 'Hi', instructions: 'Be brief.' });
    expect(answer).toMatchObject({ store: true });
    await eventually(
      () => client.responses.retrieve(answer.id).catch(() => null),
      (found) => found !== null,
    );

    const retrieved = await client.responses.retrieve(answer.id);
    const stranger = await clientOf(await gateway.newCustomer({ balance: '10' }))
      .responses.retrieve(answer.id)
      .catch((caught: unknown) => caught);
    await client.responses.delete(answer.id);
    const afterDelete = await client.responses.retrieve(answer.id).catch((caught: unknown) => caught);
    const reference = await client.responses
      .create({
        model,
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'item_reference', id: answer.output[0].id! },
        ],
      })
      .catch((caught: unknown) => caught);

    expect(retrieved).toMatchObject({ id: answer.id, status: 'completed', output: answer.output, usage: answer.usage });
    expect(retrieved.output_text).toBe(MOCK_DEFAULT_REPLY);
    expect(JSON.stringify(retrieved)).not.toContain('Be brief.');
    expect(stranger).toBeInstanceOf(OpenAI.NotFoundError);
    expect(afterDelete).toBeInstanceOf(OpenAI.NotFoundError);
    expect(afterDelete).toMatchObject({ message: expect.stringContaining('deleted') });
    expect(reference).toMatchObject({ status: 400, param: 'input[1].id' });
  });

  it('should keep nothing for a request that says store: false', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const client = clientOf(customer);

    const answer = await client.responses.create({ model, input: 'Hi', store: false });
    await books.waitForBills(customer, 1);

    expect(answer).toMatchObject({ store: false });
    expect(await books.db.query('SELECT 1 FROM stored_responses WHERE id = $1', [answer.id])).toEqual([]);
  });

  it('should answer what is never kept with a message saying so, in the error shape', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const client = clientOf(customer);

    const inputItems = await client.responses.inputItems.list('resp_1').catch((caught: unknown) => caught);
    const cancel = await client.responses.cancel('resp_1').catch((caught: unknown) => caught);
    const conversation = await client.conversations.create({}).catch((caught: unknown) => caught);
    const conversationItems = await gateway.call('GET', '/v1/conversations/conv_1/items', { token: customer.key });

    expect(inputItems).toBeInstanceOf(OpenAI.NotFoundError);
    expect(inputItems).toMatchObject({ message: expect.stringContaining("never stores a request's input") });
    expect(cancel).toBeInstanceOf(OpenAI.BadRequestError);
    expect(cancel).toMatchObject({ message: expect.stringContaining('background') });
    expect(conversation).toBeInstanceOf(OpenAI.NotFoundError);
    expect(conversation).toMatchObject({ message: expect.stringContaining('item_reference') });
    expect(conversationItems.status).toBe(404);
    expect(conversationItems.body.error.message).toMatch(/^Conversations are not supported/);
  });

  it('should keep nothing and refuse references where the operator set RESPONSES_STORE=false', async () => {
    const keepingNothing = await TestGateway.start({ RESPONSES_STORE: 'false' });
    try {
      const customer = await keepingNothing.newCustomer({ balance: '10' });
      const client = new OpenAI({ apiKey: customer.key, baseURL: `${keepingNothing.url}/v1`, maxRetries: 0 });

      const answer = await client.responses.create({ model, input: 'Hi' });
      const reference = await client.responses
        .create({
          model,
          input: [
            { role: 'user', content: 'Hi' },
            { type: 'item_reference', id: answer.output[0].id! },
          ],
        })
        .catch((caught: unknown) => caught);
      const retrieved = await client.responses.retrieve(answer.id).catch((caught: unknown) => caught);
      const deleted = await client.responses.delete(answer.id).catch((caught: unknown) => caught);
      await books.waitForBills(customer, 1);

      expect(answer).toMatchObject({ store: false });
      expect(reference).toMatchObject({ status: 400, param: 'input[1].type' });
      expect(retrieved).toBeInstanceOf(OpenAI.NotFoundError);
      expect(retrieved).toMatchObject({ message: expect.stringContaining('keeps no responses') });
      expect(deleted).toBeInstanceOf(OpenAI.NotFoundError);
      expect(await books.db.query('SELECT 1 FROM stored_responses WHERE id = $1', [answer.id])).toEqual([]);
      await books.waitForNoHolds(customer.accountId);
    } finally {
      await keepingNothing.close();
    }
  });

  it('should refuse hosted tools with a 400 naming tools', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const error = await clientOf(customer)
      .responses.create({ model, input: 'Hi', tools: [{ type: 'web_search' }] })
      .catch((caught: unknown) => caught);

    expect(error).toMatchObject({ status: 400, param: 'tools' });
  });

  it('should name the Responses field when the chat checks refuse it', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const tooLong = await gateway.call('POST', '/v1/responses', {
      token: customer.key,
      body: { model, input: 'Hi', max_output_tokens: 5000 },
    });
    const badModel = await gateway.call('POST', '/v1/responses', {
      token: customer.key,
      body: { model: 'no-such-model', input: 'Hi', stream: true },
    });

    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ param: 'max_output_tokens', type: 'invalid_request_error' });
    expect(tooLong.body.error.message).toMatch(/^max_output_tokens/);
    expect(badModel.status).toBe(400);
    expect(badModel.body.error).toMatchObject({ param: 'model' });
  });

  it('should answer an upstream failure before the stream with the error object and status', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const response = await gateway.call('POST', '/v1/responses', {
      token: customer.key,
      body: { model, input: 'Hi', stream: true, mock: { status: 500 } },
    });

    expect(response.status).toBe(500);
    expect(response.body.error).toMatchObject({ type: 'server_error' });
  });
});
