import OpenAI from 'openai';
import { formatUsd } from 'src/common/money/money';
import { usageCost } from 'src/modules/billing/pricing';
import { Bill, Books, eventually, mockPieces, pricesOf, usd } from 'test/e2e/billing-helpers';
import { FakeImageHost, TINY_PNG } from 'test/support/fake-image-host';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';

// The mock's Gemini dialect (tools/mock-upstream/mock-gemini.ts): it calls functions when toolConfig
// says ANY, names the results and images it got, answers JSON to a schema and thinks with a budget.
const PRICES = { inputPrice: '3', outputPrice: '15' };
const REPLY = mockPieces().join('');
const THOUGHT_TOKENS = 6;
const IMAGE_LIMIT = 2 * 1024 * 1024;

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: ['string', 'null'] } } } },
  },
];
const ask: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
/** The mock counts 3 per prompt, 3 per turn and a token per word of its text parts. */
const promptTokens = (...wordsPerTurn: number[]) => 3 + wordsPerTurn.reduce((sum, words) => sum + 3 + words, 0);
const dataUri = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
const looking = (url: string): OpenAI.ChatCompletionMessageParam => ({
  role: 'user',
  content: [
    { type: 'text', text: 'What is this?' },
    { type: 'image_url', image_url: { url } },
  ],
});

describe('Gemini channels: tools, images, structured output, reasoning and candidates through the OpenAI client', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let host: FakeImageHost;
  let model: string;

  beforeAll(async () => {
    gateway = await TestGateway.start({
      IMAGE_FETCH_ALLOW_PRIVATE: 'true',
      IMAGE_FETCH_ALLOW_HTTP: 'true',
      IMAGE_FETCH_MAX_BYTES: String(IMAGE_LIMIT),
    });
    worker = await TestWorker.start();
    books = await Books.open(gateway);
    host = await FakeImageHost.start();
    await gateway.addChannel('gemini-fidelity', { type: 'gemini', baseUrl: `${gateway.mock.url}/v1beta` });
    model = await gateway.addModel({
      ...PRICES,
      vision: true,
      routes: [{ channelId: 'gemini-fidelity', upstreamModel: 'gemini-mock' }],
    });
  });
  afterEach(() => books.expectBalanced());
  afterAll(async () => {
    await host.close();
    await books.close();
    await worker.close();
    await gateway.close();
  });

  const clientOf = (customer: Customer) =>
    new OpenAI({ apiKey: customer.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  const upstreamBody = () => gateway.mock.requests.at(-1)!.body as Record<string, any>;

  /** The request's bill, once settled: it must cost the usage the client saw, to the nano-dollar. */
  async function expectBilled(customer: Customer, requestId: string, usage: OpenAI.CompletionUsage): Promise<Bill> {
    const bills = await eventually(
      () => books.bills(customer),
      (found) => found.some((bill) => bill.requestId === requestId),
    );
    const bill = bills.find((found) => found.requestId === requestId)!;
    const cost = usageCost(
      pricesOf(PRICES.inputPrice, PRICES.outputPrice),
      usage.prompt_tokens,
      usage.completion_tokens,
    );
    expect(bill).toMatchObject({
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
      cost: formatUsd(cost),
    });
    const entries = await books.ledgerByReference([requestId]);
    expect(entries.map((entry) => [entry.kind, BigInt(entry.amount)])).toEqual([['usage', -cost]]);
    return bill;
  }

  it('should answer two parallel tool calls in JSON when tools are required, and bill them', async () => {
    const customer = await gateway.newCustomer();
    const { data, response } = await clientOf(customer)
      .chat.completions.create({ model, messages: ask, tools, tool_choice: 'required' })
      .withResponse();

    expect(upstreamBody()).toMatchObject({
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
            { name: 'get_time', parameters: { properties: { zone: { type: 'string', nullable: true } } } },
          ],
        },
      ],
    });
    expect(JSON.stringify(upstreamBody().tools)).not.toContain('additionalProperties');
    const [choice] = data.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    const calls = choice.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(calls.map((call) => [call.function.name, JSON.parse(call.function.arguments)])).toEqual([
      ['get_weather', { city: 'mock' }],
      ['get_time', { zone: 'mock' }],
    ]);
    expect(calls.every((call) => call.id.startsWith('call_'))).toBe(true);
    expect(data.usage).toMatchObject({ prompt_tokens: promptTokens(5), completion_tokens: 2 });
    await expectBilled(customer, response.headers.get('x-request-id')!, data.usage!);
  });

  it('should stream two parallel tool calls with their indexes, ending in tool_calls, and bill the stream', async () => {
    const customer = await gateway.newCustomer();
    const { data: stream, response } = await clientOf(customer)
      .chat.completions.create({
        model,
        messages: ask,
        tools,
        tool_choice: 'required',
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    const calls: { index: number; id?: string; name?: string; args: string }[] = [];
    const finishes: (string | null)[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        calls[delta.index] ??= { index: delta.index, args: '' };
        calls[delta.index].id ??= delta.id;
        calls[delta.index].name ??= delta.function?.name;
        calls[delta.index].args += delta.function?.arguments ?? '';
      }
      finishes.push(...chunk.choices.map((choice) => choice.finish_reason).filter(Boolean));
      usage = chunk.usage ?? usage;
    }
    expect(calls.map((call) => [call.index, call.name, JSON.parse(call.args)])).toEqual([
      [0, 'get_weather', { city: 'mock' }],
      [1, 'get_time', { zone: 'mock' }],
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
    expect(finishes).toEqual(['tool_calls']);
    expect(usage).toMatchObject({ completion_tokens: 2 });
    await expectBilled(customer, response.headers.get('x-request-id')!, usage!);
  });

  it('should call only the named function, and none when tool_choice is none', async () => {
    const customer = await gateway.newCustomer();
    const named = await clientOf(customer).chat.completions.create({
      model,
      messages: ask,
      tools,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    expect(upstreamBody().toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] },
    });
    const calls = named.choices[0].message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
    expect(calls.map((call) => call.function.name)).toEqual(['get_time']);

    const none = await clientOf(customer).chat.completions.create({ model, messages: ask, tools, tool_choice: 'none' });
    expect(upstreamBody().toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(none.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: REPLY } });
  });

  it('should send tool results back as functionResponses of the called functions', async () => {
    const customer = await gateway.newCustomer();
    const client = clientOf(customer);
    const first = await client.chat.completions.create({ model, messages: ask, tools, tool_choice: 'required' });
    const calls = first.choices[0].message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
    const { data, response } = await client.chat.completions
      .create({
        model,
        tools,
        messages: [
          ...ask,
          first.choices[0].message,
          { role: 'tool', tool_call_id: calls[1].id, content: '14:00' },
          { role: 'tool', tool_call_id: calls[0].id, content: 'sunny' },
        ],
      })
      .withResponse();
    expect(upstreamBody().contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'mock' } } },
          { functionCall: { name: 'get_time', args: { zone: 'mock' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { content: '14:00' } } },
          { functionResponse: { name: 'get_weather', response: { content: 'sunny' } } },
        ],
      },
    ]);
    expect(data.choices[0].message.content).toBe(
      'Results: get_time {"content":"14:00"}; get_weather {"content":"sunny"}',
    );
    await expectBilled(customer, response.headers.get('x-request-id')!, data.usage!);
  });

  it('should inline a data URI and an image the gateway fetched itself', async () => {
    const customer = await gateway.newCustomer();
    const fromData = await clientOf(customer).chat.completions.create({ model, messages: [looking(dataUri)] });
    expect(fromData.choices[0].message.content).toBe(`I see 1 image(s): image/png ${TINY_PNG.length} bytes`);

    const before = host.requests.length;
    const { data, response } = await clientOf(customer)
      .chat.completions.create({ model, messages: [looking(`${host.url}/cat.png`)] })
      .withResponse();
    expect(host.requests.slice(before)).toEqual(['/cat.png']);
    expect(upstreamBody().contents[0].parts[1]).toEqual({
      inlineData: { mimeType: 'image/png', data: TINY_PNG.toString('base64') },
    });
    expect(data.choices[0].message.content).toBe(`I see 1 image(s): image/png ${TINY_PNG.length} bytes`);
    await expectBilled(customer, response.headers.get('x-request-id')!, data.usage!);
  });

  it.each([
    ['not an image', '/page.html', /not an image/],
    ['larger than the limit', '/huge.png', /larger than 2097152 bytes/],
    ['redirected more than 3 times', '/loop', /redirects more than 3 times/],
  ])('should refuse an image URL %s with a 400 naming messages, charging nothing', async (_what, path, reason) => {
    const customer = await gateway.newCustomer();
    const requestsBefore = gateway.mock.requests.length;
    const response = await gateway.chat(customer.key, { model, messages: [looking(`${host.url}${path}`)] });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages' });
    expect(response.body.error.message).toMatch(reason);
    expect(gateway.mock.requests.length).toBe(requestsBefore);
    if (path === '/huge.png') {
      await host.hugeClosed;
      expect(host.hugeBytesSent).toBeLessThan(IMAGE_LIMIT + 8 * 1024 * 1024);
    }
    expect(await books.balance(customer)).toBe(usd('10'));
  });

  it('should ask for structured output with the schema, and answer JSON in it', async () => {
    const customer = await gateway.newCustomer();
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, population: { type: 'integer' } },
      required: ['city', 'population'],
      additionalProperties: false,
    };
    const { data, response } = await clientOf(customer)
      .chat.completions.create({
        model,
        messages: ask,
        response_format: { type: 'json_schema', json_schema: { name: 'city', schema, strict: true } },
      })
      .withResponse();
    expect(upstreamBody().generationConfig).toMatchObject({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(JSON.parse(data.choices[0].message.content!)).toEqual({ city: 'mock', population: 1 });
    await expectBilled(customer, response.headers.get('x-request-id')!, data.usage!);
  });

  it('should think with the budget of reasoning_effort, show the reasoning tokens and never the thoughts', async () => {
    const customer = await gateway.newCustomer();
    const { data, response } = await clientOf(customer)
      .chat.completions.create({ model, messages: ask, reasoning_effort: 'low' })
      .withResponse();
    expect(upstreamBody().generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: false });
    expect(data.choices[0].message.content).toBe(REPLY);
    expect(data.usage).toMatchObject({
      completion_tokens: mockPieces().length + THOUGHT_TOKENS,
      completion_tokens_details: { reasoning_tokens: THOUGHT_TOKENS },
    });
    await expectBilled(customer, response.headers.get('x-request-id')!, data.usage!);

    const stream = await clientOf(customer).chat.completions.create({
      model,
      messages: ask,
      reasoning_effort: 'high',
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe(REPLY);
  });

  it('should stream both candidates of n=2, each under its index, and bill both', async () => {
    const customer = await gateway.newCustomer();
    const { data: stream, response } = await clientOf(customer)
      .chat.completions.create({ model, messages: ask, n: 2, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const texts = ['', ''];
    const finishes: [number, string][] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        texts[choice.index] += choice.delta.content ?? '';
        if (choice.finish_reason) {
          finishes.push([choice.index, choice.finish_reason]);
        }
      }
      usage = chunk.usage ?? usage;
    }
    expect(texts).toEqual([REPLY, REPLY]);
    expect(finishes).toEqual([
      [0, 'stop'],
      [1, 'stop'],
    ]);
    expect(usage).toMatchObject({ prompt_tokens: promptTokens(5), completion_tokens: 2 * mockPieces().length });
    await expectBilled(customer, response.headers.get('x-request-id')!, usage!);
  });

  it('should answer both candidates of n=2 in JSON, each with its index', async () => {
    const customer = await gateway.newCustomer();
    const { data, response } = await clientOf(customer)
      .chat.completions.create({ model, messages: ask, n: 2 })
      .withResponse();
    expect(upstreamBody().generationConfig).toMatchObject({ candidateCount: 2 });
    expect(data.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
      [0, REPLY, 'stop'],
      [1, REPLY, 'stop'],
    ]);
    expect(data.usage).toMatchObject({ completion_tokens: 2 * mockPieces().length });
    await expectBilled(customer, response.headers.get('x-request-id')!, data.usage!);
  });

  it.each([
    ['logprobs', { logprobs: true }, 'logprobs'],
    ['logit_bias', { logit_bias: { '1': 5 } }, 'logit_bias'],
    ['audio output', { modalities: ['text', 'audio'] }, 'modalities'],
    [
      'a tool_choice naming no tool',
      { tools, tool_choice: { type: 'function', function: { name: 'unknown' } } },
      'tool_choice',
    ],
  ])('should refuse %s with a 400 naming the parameter, charging nothing', async (_what, extra, param) => {
    const customer = await gateway.newCustomer();
    const response = await gateway.chat(customer.key, { model, messages: ask, ...extra });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(await books.balance(customer)).toBe(usd('10'));
  });

  describe('without IMAGE_FETCH_ALLOW_PRIVATE', () => {
    let strict: TestGateway;
    beforeAll(async () => {
      strict = await TestGateway.start({ IMAGE_FETCH_ALLOW_HTTP: 'true' });
    });
    afterAll(() => strict.close());

    it.each([
      ['a loopback address', () => `${host.url}/cat.png`],
      ['a name that resolves to loopback', () => `http://localhost:${new URL(host.url).port}/cat.png`],
      ['an IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${new URL(host.url).port}/cat.png`],
      ['a cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ])('should refuse an image at %s without fetching it: a 400 naming messages', async (_what, url) => {
      const customer = await strict.newCustomer();
      const before = host.requests.length;
      const response = await strict.chat(customer.key, { model, messages: [looking(url())] });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ param: 'messages', message: expect.stringMatching(/private/) });
      expect(host.requests.length).toBe(before);
    });
  });
});
