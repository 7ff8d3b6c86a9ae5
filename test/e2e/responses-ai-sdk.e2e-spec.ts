import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, streamText, tool } from 'ai';
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
