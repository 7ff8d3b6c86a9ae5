import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, ModelMessage, stepCountIs, streamText, tool } from 'ai';
import { StoredResponsesExpiry } from 'src/modules/responses/stored/stored-responses-expiry.service';
import {
  BillingWorld,
  Books,
  costOf,
  eventually,
  MOCK_DEFAULT_REPLY,
  mockUsage,
  openBillingWorld,
} from 'test/e2e/billing-helpers';
import { Customer, TestGateway } from 'test/support/gateway';
import { formatUsd } from 'src/common/money/money';

/**
 * The Vercel AI SDK pointed only at the gateway: its default OpenAI provider speaks the Responses API,
 * `.chat()` speaks chat completions; both answer, stream and are billed the same. On its defaults
 * (`store: true`) the provider refers to earlier answers by item id, which the gateway kept.
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

  /** A provider that also records each Responses body the SDK sent. */
  function recordingProviderOf(customer: Customer) {
    const sentBodies: { input: { type?: string }[]; store?: boolean }[] = [];
    const provider = createOpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: customer.key,
      fetch: (url, init) => {
        sentBodies.push(JSON.parse(init!.body as string));
        return fetch(url, init);
      },
    });
    return { provider, sentBodies };
  }

  /** The chat messages the upstream received for the gateway's latest request. */
  const lastRelayedMessages = () => (gateway.mock.requests.at(-1)!.body as { messages: any[] }).messages;

  /** What the upstream receives on the third turn of a conversation started with `prompt`. */
  const threeTurnConversation = () => [
    { role: 'user', content: [{ type: 'text', text: prompt }] },
    { role: 'assistant', content: MOCK_DEFAULT_REPLY },
    { role: 'user', content: [{ type: 'text', text: 'Turn 2' }] },
    { role: 'assistant', content: MOCK_DEFAULT_REPLY },
    { role: 'user', content: [{ type: 'text', text: 'Turn 3' }] },
  ];

  /** Keeping an answer happens after its last byte: a test that reads the table waits for the row. */
  async function waitForKept(responseId: string): Promise<void> {
    await eventually(
      () => books.db.query('SELECT 1 FROM stored_responses WHERE id = $1', [responseId]),
      (rows: unknown[]) => rows.length === 1,
    );
  }

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

  it('should continue a conversation from earlier results with store: false, sending every item', async () => {
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

    expect(stateless.text).toBe(MOCK_DEFAULT_REPLY);
    expect(lastRelayedMessages()).toEqual([
      { role: 'user', content: [{ type: 'text', text: prompt }] },
      { role: 'assistant', content: MOCK_DEFAULT_REPLY },
      { role: 'user', content: [{ type: 'text', text: 'Again, please' }] },
    ]);
  });

  it('should generateText three turns on default settings, the earlier answers sent as item_reference', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const { provider, sentBodies } = recordingProviderOf(customer);
    const messages: ModelMessage[] = [{ role: 'user', content: prompt }];

    for (const turn of [2, 3, 4]) {
      const result = await generateText({ model: provider(model), messages, maxRetries: 0 });
      expect(result.text).toBe(MOCK_DEFAULT_REPLY);
      expect(result.providerMetadata?.openai?.responseId).toMatch(/^resp_/);
      messages.push(...result.response.messages, { role: 'user', content: `Turn ${turn}` });
    }

    expect(sentBodies.at(-1)!.input.filter((item) => item.type === 'item_reference')).toHaveLength(2);
    expect(sentBodies.every((body) => body.store !== false)).toBe(true);
    expect(lastRelayedMessages()).toEqual(threeTurnConversation());
    // The referred items are billed as prompt, as if the client had sent them.
    const bills = await books.waitForBills(customer, 3);
    expect(bills.map((bill) => bill.promptTokens).sort((a, b) => a - b)).toEqual([
      mockUsage(threeTurnConversation().slice(0, 1)).promptTokens,
      mockUsage(threeTurnConversation().slice(0, 3)).promptTokens,
      mockUsage(threeTurnConversation()).promptTokens,
    ]);
    await books.waitForNoHolds(customer.accountId);
  });

  it('should streamText three turns on default settings', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const { provider, sentBodies } = recordingProviderOf(customer);
    const messages: ModelMessage[] = [{ role: 'user', content: prompt }];
    let errors = 0;

    for (const turn of [2, 3, 4]) {
      const result = streamText({ model: provider(model), messages, maxRetries: 0, onError: () => void errors++ });
      let text = '';
      for await (const piece of result.textStream) {
        text += piece;
      }
      expect(text).toBe(MOCK_DEFAULT_REPLY);
      messages.push(...(await result.response).messages, { role: 'user', content: `Turn ${turn}` });
    }

    expect(errors).toBe(0);
    expect(sentBodies.at(-1)!.input.filter((item) => item.type === 'item_reference')).toHaveLength(2);
    expect(lastRelayedMessages()).toEqual(threeTurnConversation());
    expect(await books.waitForBills(customer, 3)).toHaveLength(3);
    await books.waitForNoHolds(customer.accountId);
  });

  it('should continue after a tool turn with a text turn, on default settings', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const provider = providerOf(customer);
    const weather = tool({
      description: 'Current weather for a city',
      inputSchema: jsonSchema<{ city: string }>({
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      }),
      execute: ({ city }) => Promise.resolve(`21 degrees in ${city}`),
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Weather in Paris?' }];

    const toolTurn = await generateText({
      model: provider(model),
      messages,
      tools: { weather },
      stopWhen: stepCountIs(2),
      prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? 'required' : 'auto' }),
      maxRetries: 0,
    });
    messages.push(...toolTurn.response.messages, { role: 'user', content: 'And tomorrow?' });
    const textTurn = await generateText({ model: provider(model), messages, tools: { weather }, maxRetries: 0 });

    expect(textTurn.text).toBe(MOCK_DEFAULT_REPLY);
    const relayed = lastRelayedMessages();
    expect(relayed).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [expect.objectContaining({ function: { name: 'weather', arguments: '{"city":"mock"}' } })],
      },
      { role: 'tool', tool_call_id: relayed[1].tool_calls[0].id, content: '21 degrees in mock' },
      { role: 'assistant', content: MOCK_DEFAULT_REPLY },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
    expect(await books.waitForBills(customer, 3)).toHaveLength(3);
    await books.waitForNoHolds(customer.accountId);
  });

  it("should refuse another account's item with a 400 naming it, and bill nothing", async () => {
    const owner = await gateway.newCustomer({ balance: '10' });
    const stranger = await gateway.newCustomer({ balance: '10' });
    const first = await generateText({ model: providerOf(owner)(model), prompt, maxRetries: 0 });
    const [part] = first.response.messages[0].content as { providerOptions?: { openai?: { itemId?: string } } }[];
    const itemId = part.providerOptions?.openai?.itemId;

    const error = await generateText({
      model: providerOf(stranger)(model),
      messages: [{ role: 'user', content: prompt }, ...first.response.messages],
      maxRetries: 0,
    }).catch((caught: unknown) => caught);

    expect(itemId).toMatch(/^msg_/);
    expect(error).toMatchObject({ statusCode: 400 });
    expect(JSON.parse((error as { responseBody: string }).responseBody)).toMatchObject({
      error: { param: 'input[1].id', type: 'invalid_request_error', message: expect.stringContaining(itemId!) },
    });
    expect(await books.bills(stranger)).toEqual([]);
    await books.waitForNoHolds(stranger.accountId);
  });

  it('should refuse an expired item with a 400, and the worker should delete it', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const provider = providerOf(customer);
    const first = await generateText({ model: provider(model), prompt, maxRetries: 0 });
    const responseId = first.providerMetadata!.openai.responseId as string;
    await waitForKept(responseId);
    // As if RESPONSES_ITEM_TTL_DAYS had passed.
    await books.db.query(`UPDATE stored_responses SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      responseId,
    ]);

    const error = await generateText({
      model: provider(model),
      messages: [{ role: 'user', content: prompt }, ...first.response.messages],
      maxRetries: 0,
    }).catch((caught: unknown) => caught);
    const deleted = await world.worker.app.get(StoredResponsesExpiry).expire();

    expect(error).toMatchObject({ statusCode: 400 });
    expect(JSON.parse((error as { responseBody: string }).responseBody).error.message).toMatch(/expired/);
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect(await books.db.query('SELECT 1 FROM stored_response_items WHERE response_id = $1', [responseId])).toEqual(
      [],
    );
  });

  it('should find the items after an API restart: another API process answers the next turn', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const first = await generateText({ model: providerOf(customer)(model), prompt, maxRetries: 0 });
    await waitForKept(first.providerMetadata!.openai.responseId as string);
    const restarted = await TestGateway.start();
    try {
      const provider = createOpenAI({ baseURL: `${restarted.url}/v1`, apiKey: customer.key });
      const second = await generateText({
        model: provider(model),
        messages: [{ role: 'user', content: prompt }, ...first.response.messages, { role: 'user', content: 'More' }],
        maxRetries: 0,
      });

      expect(second.text).toBe(MOCK_DEFAULT_REPLY);
      expect(lastRelayedMessages()).toEqual([
        { role: 'user', content: [{ type: 'text', text: prompt }] },
        { role: 'assistant', content: MOCK_DEFAULT_REPLY },
        { role: 'user', content: [{ type: 'text', text: 'More' }] },
      ]);
    } finally {
      await restarted.close();
    }
    expect(await books.waitForBills(customer, 2)).toHaveLength(2);
    await books.waitForNoHolds(customer.accountId);
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
