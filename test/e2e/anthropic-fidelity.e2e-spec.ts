import OpenAI from 'openai';
import { formatUsd } from 'src/common/money/money';
import {
  Bill,
  BillingWorld,
  Books,
  costOf,
  MOCK_DEFAULT_REPLY,
  mockPieces,
  openBillingWorld,
} from 'test/e2e/billing-helpers';
import { Customer, parseEventStream, TestGateway } from 'test/support/gateway';
import { THINKING_TEXT } from 'tools/mock-upstream/mock-anthropic-blocks';
import { mockArgumentPieces } from 'tools/mock-upstream/mock-upstream.server';

// Prices whose products are not whole nano-dollars, so every cost goes through the round-up.
const INPUT_PRICE = '3.000003';
const OUTPUT_PRICE = '15.000007';
const MAX_OUTPUT_TOKENS = 3000;
const WEATHER: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['city', 'unit'],
    },
  },
};
const TIME: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } },
};
/** What the fake answers a forced call of each tool with: a value fitting its schema. */
const WEATHER_ARGUMENTS = '{"city":"mock","unit":"celsius"}';
const TIME_ARGUMENTS = '{"zone":"mock"}';
const CITY_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer' } },
  required: ['city', 'population'],
  additionalProperties: false,
};
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'Weather and time in Paris?' };

/**
 * An Anthropic channel behind the OpenAI wire format, through the official `openai` client: tools and
 * their streamed deltas, tool results, images, structured output, reasoning and the refusals of what
 * the Messages API cannot do, each answer billed to the nano-dollar from the usage the client sees.
 */
describe('Anthropic channel fidelity through the official openai client', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  let model: string;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE);
    ({ gateway, books } = world);
    await gateway.addChannel('anthropic-fidelity', { type: 'anthropic', baseUrl: `${gateway.mock.url}/v1` });
    model = await gateway.addModel({
      inputPrice: INPUT_PRICE,
      outputPrice: OUTPUT_PRICE,
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      vision: true,
      routes: [{ channelId: 'anthropic-fidelity', upstreamModel: 'claude-mock' }],
    });
  });
  afterEach(() => books.expectBalanced());
  afterAll(() => world.close());

  const clientOf = (customer: Customer) =>
    new OpenAI({ apiKey: customer.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  const newCustomer = () => gateway.newCustomer({ balance: '10' });
  const sentToAnthropic = () => gateway.mock.requests.at(-1)!.body as Record<string, any>;

  /** The one bill of `customer`, once settled: its tokens and cost are the usage the client saw, priced. */
  async function expectBilledAsSeen(customer: Customer, usage: OpenAI.CompletionUsage | undefined): Promise<Bill> {
    expect(usage).toBeDefined();
    const bills = await books.waitForBills(customer, 1);
    expect(bills).toHaveLength(1);
    await books.waitForNoHolds(customer.accountId);
    const seen = { promptTokens: usage!.prompt_tokens, completionTokens: usage!.completion_tokens };
    expect(bills[0]).toMatchObject({ ...seen, cost: formatUsd(costOf(world.prices, seen)) });
    expect(await books.balance(customer)).toBe(10_000_000_000n - costOf(world.prices, seen));
    return bills[0];
  }

  /** A refusal: a 400 naming `param`, nothing billed and nothing left held. */
  async function expectRefused(customer: Customer, body: Record<string, unknown>, param: string): Promise<void> {
    const requests = gateway.mock.requests.length;
    const error = await clientOf(customer)
      .chat.completions.create({ model, ...body } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, param, type: 'invalid_request_error' });
    expect(gateway.mock.requests.length).toBe(requests);
    await books.waitForNoHolds(customer.accountId);
    expect(await books.bills(customer)).toEqual([]);
    expect(await books.balance(customer)).toBe(10_000_000_000n);
  }

  describe('tools', () => {
    it('should answer tool_choice required with two parallel tool calls, billed for their arguments', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const answer = await clientOf(customer).chat.completions.create({
        model,
        messages: [question],
        tools: [WEATHER, TIME],
        tool_choice: 'required',
      });

      expect(sentToAnthropic()).toMatchObject({
        tools: [
          { name: 'get_weather', description: 'Current weather for a city', input_schema: WEATHER.function.parameters },
          { name: 'get_time', input_schema: TIME.function.parameters },
        ],
        tool_choice: { type: 'any' },
      });
      expect(answer.choices[0]).toMatchObject({
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { type: 'function', function: { name: 'get_weather', arguments: WEATHER_ARGUMENTS } },
            { type: 'function', function: { name: 'get_time', arguments: TIME_ARGUMENTS } },
          ],
        },
      });
      const calls = answer.choices[0].message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
      expect(calls.map((call) => call.id)).toEqual([
        expect.stringMatching(/^toolu_/),
        expect.stringMatching(/^toolu_/),
      ]);
      const argumentTokens = mockArgumentPieces(WEATHER_ARGUMENTS).length + mockArgumentPieces(TIME_ARGUMENTS).length;
      expect(answer.usage?.completion_tokens).toBe(argumentTokens);
      await expectBilledAsSeen(customer, answer.usage);
    });

    it('should stream two tool calls with index 0 and 1, each id and name on its first delta only', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const stream = clientOf(customer).chat.completions.stream({
        model,
        messages: [question],
        tools: [WEATHER, TIME],
        tool_choice: 'required',
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      stream.on('chunk', (chunk) => chunks.push(chunk));
      const final = await stream.finalChatCompletion();

      const deltas = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
      for (const index of [0, 1]) {
        const mine = deltas.filter((delta) => delta.index === index);
        expect(mine[0]).toMatchObject({ id: expect.stringMatching(/^toolu_/), type: 'function' });
        expect(mine.slice(1).every((delta) => delta.id === undefined && delta.function?.name === undefined)).toBe(true);
      }
      expect(final.choices[0].finish_reason).toBe('tool_calls');
      expect(final.choices[0].message.tool_calls).toMatchObject([
        { function: { name: 'get_weather', arguments: WEATHER_ARGUMENTS } },
        { function: { name: 'get_time', arguments: TIME_ARGUMENTS } },
      ]);
      await expectBilledAsSeen(customer, chunks.at(-1)?.usage ?? undefined);
    });

    it('should call one tool at a time with parallel_tool_calls false, and a named function alone', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const client = clientOf(customer);
      const one = await client.chat.completions.create({
        model,
        messages: [question],
        tools: [WEATHER, TIME],
        tool_choice: 'required',
        parallel_tool_calls: false,
      });
      expect(sentToAnthropic().tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
      expect(one.choices[0].message.tool_calls).toHaveLength(1);

      const named = await client.chat.completions.create({
        model,
        messages: [question],
        tools: [WEATHER, TIME],
        tool_choice: { type: 'function', function: { name: 'get_time' } },
      });
      expect(sentToAnthropic().tool_choice).toEqual({ type: 'tool', name: 'get_time' });
      expect(named.choices[0].message.tool_calls).toMatchObject([{ function: { name: 'get_time' } }]);

      const none = await client.chat.completions.create({
        model,
        messages: [question],
        tools: [WEATHER],
        tool_choice: 'none',
      });
      expect(sentToAnthropic().tool_choice).toEqual({ type: 'none' });
      expect(none.choices[0].message).toMatchObject({ content: MOCK_DEFAULT_REPLY });
    });

    it('should take both tool results back as one user turn answering the tool_use blocks', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const client = clientOf(customer);
      const first = await client.chat.completions.create({
        model,
        messages: [question],
        tools: [WEATHER, TIME],
        tool_choice: 'required',
      });
      const calls = first.choices[0].message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];

      const second = await client.chat.completions.create({
        model,
        tools: [WEATHER, TIME],
        messages: [
          question,
          first.choices[0].message,
          { role: 'tool', tool_call_id: calls[0].id, content: 'Sunny, 21 °C' },
          { role: 'tool', tool_call_id: calls[1].id, content: '14:05' },
        ],
      });

      // The fake refuses, as Anthropic does, a tool_result that answers no tool_use of the turn before.
      expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: MOCK_DEFAULT_REPLY } });
      expect(sentToAnthropic().messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: calls[0].id, name: 'get_weather', input: JSON.parse(WEATHER_ARGUMENTS) },
            { type: 'tool_use', id: calls[1].id, name: 'get_time', input: JSON.parse(TIME_ARGUMENTS) },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: calls[0].id, content: 'Sunny, 21 °C' },
            { type: 'tool_result', tool_use_id: calls[1].id, content: '14:05' },
          ],
        },
      ]);
    });
  });

  describe('images', () => {
    it('should send a data URI as a base64 source and an https URL as a url source Anthropic fetches', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const answer = await clientOf(customer).chat.completions.create({
        model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Compare these' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_PNG}` } },
              { type: 'image_url', image_url: { url: 'https://images.example.com/cat.jpg' } },
            ],
          },
        ],
      });

      expect(sentToAnthropic().messages[0].content).toEqual([
        { type: 'text', text: 'Compare these' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL_PNG } },
        { type: 'image', source: { type: 'url', url: 'https://images.example.com/cat.jpg' } },
      ]);
      expect(answer.choices[0].message.content).toBe(MOCK_DEFAULT_REPLY);
      await expectBilledAsSeen(customer, answer.usage);
    });

    it('should refuse a plain http image URL with a 400 naming messages', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const content = [{ type: 'image_url', image_url: { url: 'http://images.example.com/cat.jpg' } }];
      await expectRefused(customer, { messages: [{ role: 'user', content }] }, 'messages');
    });
  });

  describe('response_format', () => {
    const jsonSchema = {
      type: 'json_schema' as const,
      json_schema: { name: 'city', schema: CITY_SCHEMA, strict: true },
    };
    const expected = { city: 'mock', population: 1 };

    it('should answer a json_schema through structured output as plain JSON content, finish_reason stop', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const answer = await clientOf(customer).chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'A big city' }],
        response_format: jsonSchema,
      });

      expect(sentToAnthropic().output_config).toEqual({ format: { type: 'json_schema', schema: CITY_SCHEMA } });
      expect(answer.choices[0].finish_reason).toBe('stop');
      expect(answer.choices[0].message.tool_calls).toBeUndefined();
      expect(JSON.parse(answer.choices[0].message.content!)).toEqual(expected);
      expect(answer.usage?.completion_tokens).toBe(mockArgumentPieces(JSON.stringify(expected)).length);
      await expectBilledAsSeen(customer, answer.usage);
    });

    it('should stream the same JSON as content deltas', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const stream = clientOf(customer).chat.completions.stream({
        model,
        messages: [{ role: 'user', content: 'A big city' }],
        response_format: jsonSchema,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      stream.on('chunk', (chunk) => chunks.push(chunk));
      const final = await stream.finalChatCompletion();

      expect(final.choices[0].finish_reason).toBe('stop');
      expect(JSON.parse(final.choices[0].message.content!)).toEqual(expected);
      await expectBilledAsSeen(customer, chunks.at(-1)?.usage ?? undefined);
    });

    it('should ask for a json_object in the system prompt, after the client own', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      await clientOf(customer).chat.completions.create({
        model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'A city as JSON' },
        ],
        response_format: { type: 'json_object' },
      });
      expect(sentToAnthropic().system).toMatch(/^Be brief\.\n\nAnswer with one JSON object and nothing else/);
      expect(sentToAnthropic().output_config).toBeUndefined();
    });
  });

  describe('reasoning_effort', () => {
    const thinkingTokens = mockPieces(THINKING_TEXT).length;

    it('should think within max_tokens, never show the thinking, and show and bill its tokens as reasoning', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const answer = await clientOf(customer).chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Say hi' }],
        reasoning_effort: 'medium',
        max_completion_tokens: 2500,
      });

      expect(sentToAnthropic()).toMatchObject({ max_tokens: 2500, thinking: { type: 'enabled', budget_tokens: 2048 } });
      expect(answer.choices[0].message.content).toBe(MOCK_DEFAULT_REPLY);
      expect(JSON.stringify(answer)).not.toContain(THINKING_TEXT);
      expect(answer.usage).toMatchObject({
        completion_tokens: thinkingTokens + mockPieces().length,
        completion_tokens_details: { reasoning_tokens: thinkingTokens },
      });
      const bill = await expectBilledAsSeen(customer, answer.usage);
      expect(bill.reasoningTokens).toBe(thinkingTokens);
    });

    it('should stream no thinking text, only the answer, and the reasoning tokens in the usage chunk', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const response = await gateway.chat(customer.key, {
        model,
        messages: [{ role: 'user', content: 'Say hi' }],
        reasoning_effort: 'low',
        stream: true,
        stream_options: { include_usage: true },
      });

      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(true);
      expect(response.text).not.toContain('The user wants');
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(MOCK_DEFAULT_REPLY);
      const usage = chunks.at(-1).usage as OpenAI.CompletionUsage;
      expect(usage.completion_tokens_details).toEqual({ reasoning_tokens: thinkingTokens });
      const bill = await expectBilledAsSeen(customer, usage);
      expect(bill.reasoningTokens).toBe(thinkingTokens);
    });

    it('should refuse a budget that the max_tokens cannot hold, and sampling Anthropic refuses beside thinking', async () => {
      const think = { messages: [{ role: 'user', content: 'Hi' }], reasoning_effort: 'medium' };
      // 2,048 thinking tokens need a larger max_tokens: the client's, or the model's 3,000 for 'high'.
      await expectRefused(await newCustomer(), { ...think, max_tokens: 2048 }, 'reasoning_effort');
      await expectRefused(await newCustomer(), { ...think, reasoning_effort: 'high' }, 'reasoning_effort');
      await expectRefused(await newCustomer(), { ...think, temperature: 0.3 }, 'temperature');
      const forced = { ...think, tools: [WEATHER], tool_choice: 'required' };
      await expectRefused(await newCustomer(), forced, 'tool_choice');
    });
  });

  describe('what the Messages API cannot do', () => {
    it.each([
      [{ logprobs: true }, 'logprobs'],
      [{ logprobs: true, top_logprobs: 3 }, 'logprobs'],
      [{ presence_penalty: 0.5 }, 'presence_penalty'],
      [{ logit_bias: { '1234': 5 } }, 'logit_bias'],
      [{ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
    ])('should refuse %j with a 400 naming %s, billing nothing', async (extra, param) => {
      const customer = await gateway.newCustomer({ balance: '10' });
      await expectRefused(customer, { messages: [{ role: 'user', content: 'Hi' }], ...extra }, param);
    });
  });
});
