import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { BillingWorld, Books, costOf, MOCK_DEFAULT_REPLY, mockUsage, openBillingWorld } from 'test/e2e/billing-helpers';
import { Customer, TestGateway } from 'test/support/gateway';
import { formatUsd } from 'src/common/money/money';

/**
 * The Vercel AI SDK pointed only at the gateway: its default OpenAI provider speaks the Responses API,
 * `.chat()` speaks chat completions; both answer, stream and are billed the same.
 */
describe('the Vercel AI SDK against the gateway', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  let model: string;

  beforeAll(async () => {
    world = await openBillingWorld('2.5', '10', { maxOutputTokens: 1000 });
    ({ gateway, books, model } = world);
  });
  afterEach(() => books.expectBalanced());
  afterAll(() => world.close());

  const providerOf = (customer: Customer) => createOpenAI({ baseURL: `${gateway.url}/v1`, apiKey: customer.key });
  const prompt = 'Say hello to the world';
  const usage = mockUsage([{ role: 'user', content: prompt }]);

  async function onlyBillCost(customer: Customer): Promise<string> {
    const bills = await books.waitForBills(customer, 1);
    expect(bills).toHaveLength(1);
    await books.waitForNoHolds(customer.accountId);
    return bills[0].cost;
  }

  it('should generateText through the default provider (the Responses API), billed as chat', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const result = await generateText({ model: providerOf(customer)(model), prompt, maxRetries: 0 });

    expect(result.text).toBe(MOCK_DEFAULT_REPLY);
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({ inputTokens: usage.promptTokens, outputTokens: usage.completionTokens });
    expect(result.providerMetadata?.openai?.responseId).toMatch(/^resp_/);
    expect(await onlyBillCost(customer)).toBe(formatUsd(costOf(world.prices, usage)));
  });

  it('should streamText through the default provider', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const result = streamText({ model: providerOf(customer)(model), prompt, maxRetries: 0 });
    let text = '';
    for await (const piece of result.textStream) {
      text += piece;
    }

    expect(text).toBe(MOCK_DEFAULT_REPLY);
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject({
      inputTokens: usage.promptTokens,
      outputTokens: usage.completionTokens,
    });
    expect(await onlyBillCost(customer)).toBe(formatUsd(costOf(world.prices, usage)));
  });

  it('should get a tool call through the default provider', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const weather = tool({
      description: 'Current weather for a city',
      inputSchema: jsonSchema<{ city: string }>({
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      }),
    });

    const result = await generateText({
      model: providerOf(customer)(model),
      prompt: 'Weather in Paris?',
      tools: { weather },
      toolChoice: 'required',
      maxRetries: 0,
    });

    expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: 'weather', input: { city: 'mock' } })]);
    expect(result.finishReason).toBe('tool-calls');
  });

  it('should run a two-step tool loop: the call, its result sent back, then the answer', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const weather = tool({
      description: 'Current weather for a city',
      inputSchema: jsonSchema<{ city: string }>({
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      }),
      execute: ({ city }) => Promise.resolve(`21 degrees in ${city}`),
    });

    const result = await generateText({
      model: providerOf(customer)(model),
      prompt: 'Weather in Paris?',
      tools: { weather },
      stopWhen: stepCountIs(2),
      // The mock calls a tool only when forced: forced first, free after.
      prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? 'required' : 'auto' }),
      maxRetries: 0,
    });

    expect(result.steps).toHaveLength(2);
    expect(result.text).toBe(MOCK_DEFAULT_REPLY);
    const sent = gateway.mock.requests.at(-1)!.body as { messages: any[] };
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [expect.objectContaining({ function: { name: 'weather', arguments: '{"city":"mock"}' } })],
      },
      { role: 'tool', tool_call_id: sent.messages[1].tool_calls[0].id, content: '21 degrees in mock' },
    ]);
    expect(await books.waitForBills(customer, 2)).toHaveLength(2);
    await books.waitForNoHolds(customer.accountId);
  });

  it('should continue a conversation from earlier results with store: false, and name the stored item otherwise', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const provider = providerOf(customer);
    const first = await generateText({ model: provider(model), prompt, maxRetries: 0 });
    const messages = [
      { role: 'user' as const, content: prompt },
      ...first.response.messages,
      { role: 'user' as const, content: 'Again, please' },
    ];

    const stateless = await generateText({
      model: provider(model),
      messages,
      providerOptions: { openai: { store: false } },
      maxRetries: 0,
    });
    // By default the SDK assumes OpenAI kept the earlier answer and refers to it by id instead of sending it.
    const referring = await generateText({ model: provider(model), messages, maxRetries: 0 }).catch(
      (error: unknown) => error,
    );

    expect(stateless.text).toBe(MOCK_DEFAULT_REPLY);
    expect((gateway.mock.requests.at(-1)!.body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: prompt }] },
      { role: 'assistant', content: MOCK_DEFAULT_REPLY },
      { role: 'user', content: [{ type: 'text', text: 'Again, please' }] },
    ]);
    expect(referring).toMatchObject({ statusCode: 400 });
    expect(JSON.parse((referring as { responseBody: string }).responseBody)).toMatchObject({
      error: { param: 'input[1].type', type: 'invalid_request_error' },
    });
  });

  it('should generateText and streamText through .chat() (chat completions)', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const chatModel = providerOf(customer).chat(model);

    const generated = await generateText({ model: chatModel, prompt, maxRetries: 0 });
    const streamed = streamText({ model: chatModel, prompt, maxRetries: 0 });
    let text = '';
    for await (const piece of streamed.textStream) {
      text += piece;
    }

    expect(generated.text).toBe(MOCK_DEFAULT_REPLY);
    expect(generated.response.id).toMatch(/^chatcmpl-/);
    expect(text).toBe(MOCK_DEFAULT_REPLY);
    expect(await streamed.usage).toMatchObject({ inputTokens: usage.promptTokens });
  });
});
