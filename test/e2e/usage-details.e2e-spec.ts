import OpenAI from 'openai';
import { formatUsd } from 'src/common/money/money';
import { usageCost } from 'src/modules/billing/pricing';
import { estimatePromptTokens } from 'src/modules/billing/token-estimator';
import { Bill, Books, eventually, mockPieces, pricesOf, usd, userMessages } from 'test/e2e/billing-helpers';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';

type Dialect = 'openai' | 'anthropic' | 'gemini';
const DIALECTS: Dialect[] = ['openai', 'anthropic', 'gemini'];
const BASE_PATHS: Record<Dialect, string> = { openai: '/v1', anthropic: '/v1', gemini: '/v1beta' };

/** Claude Sonnet's prices: a cache read is a tenth of the input price, a cache write 1.25 times it. */
const SPLIT_PRICES = { inputPrice: '3', cachedInputPrice: '0.3', cacheWriteInputPrice: '3.75', outputPrice: '15' };
const PLAIN_PRICES = { inputPrice: '3', outputPrice: '15' };

// The mock reports these on top of what it counts (tools/mock-upstream/mock-usage-details.ts).
const MARKER = '[mock-usage cached=40 cache_write=20 reasoning=30]';
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: `Say hi ${MARKER}` }];
// The mock counts 3 per prompt, 3 per message and one per word; one completion token per piece of its reply.
const COUNTED_PROMPT = 3 + 3 + 6;
const REPLY_TOKENS = mockPieces().length;

interface Split {
  prompt: number;
  completion: number;
  cached: number;
  cacheWrite: number;
  /** null: the provider does not tell them apart (the client sees no completion_tokens_details). */
  reasoning: number | null;
}

/** What the client and the bill see of the same request, per upstream dialect. */
const EXPECTED: Record<Dialect, Split> = {
  // OpenAI has no cache writes: the marker's are not reported.
  openai: { prompt: COUNTED_PROMPT + 40, completion: REPLY_TOKENS + 30, cached: 40, cacheWrite: 0, reasoning: 30 },
  // input_tokens leave out the cache's reads and writes; thinking is inside output_tokens, not told apart.
  anthropic: {
    prompt: COUNTED_PROMPT + 40 + 20,
    completion: REPLY_TOKENS + 30,
    cached: 40,
    cacheWrite: 20,
    reasoning: null,
  },
  // promptTokenCount includes the cached content; candidatesTokenCount leaves out the thoughts.
  gemini: { prompt: COUNTED_PROMPT + 40, completion: REPLY_TOKENS + 30, cached: 40, cacheWrite: 0, reasoning: 30 },
};

function wireUsage(split: Split) {
  return {
    prompt_tokens: split.prompt,
    completion_tokens: split.completion,
    total_tokens: split.prompt + split.completion,
    prompt_tokens_details: { cached_tokens: split.cached },
    ...(split.reasoning === null ? {} : { completion_tokens_details: { reasoning_tokens: split.reasoning } }),
  };
}

/** Worked out by hand: each part × its price per million tokens, the sum rounded up once to a nano-dollar. */
function splitCost(split: Split): bigint {
  const at = (tokens: number, price: string) => BigInt(tokens) * usd(price);
  const scaled =
    at(split.prompt - split.cached - split.cacheWrite, SPLIT_PRICES.inputPrice) +
    at(split.cached, SPLIT_PRICES.cachedInputPrice) +
    at(split.cacheWrite, SPLIT_PRICES.cacheWriteInputPrice) +
    at(split.completion, SPLIT_PRICES.outputPrice);
  return (scaled + 999_999n) / 1_000_000n;
}

describe('usage details: cached, cache-write and reasoning tokens, shown and billed exactly', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  const splitModel = {} as Record<Dialect, string>;
  const plainModel = {} as Record<Dialect, string>;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    worker = await TestWorker.start();
    books = await Books.open(gateway);
    for (const dialect of DIALECTS) {
      const channelId = `${dialect}-details`;
      await gateway.addChannel(channelId, { type: dialect, baseUrl: `${gateway.mock.url}${BASE_PATHS[dialect]}` });
      const routes = [{ channelId, upstreamModel: `${dialect}-mock` }];
      splitModel[dialect] = await gateway.addModel({ ...SPLIT_PRICES, routes });
      plainModel[dialect] = await gateway.addModel({ ...PLAIN_PRICES, routes });
    }
  });
  afterEach(() => books.expectBalanced());
  afterAll(async () => {
    await books.close();
    await worker.close();
    await gateway.close();
  });

  const clientOf = (customer: Customer) =>
    new OpenAI({ apiKey: customer.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });

  /** The bill of one request, once settled, and what the ledger moved for it. */
  async function settled(customer: Customer, requestId: string): Promise<{ bill: Bill; debited: bigint }> {
    const bills = await eventually(
      () => books.bills(customer),
      (found) => found.some((bill) => bill.requestId === requestId),
    );
    const bill = bills.find((found) => found.requestId === requestId)!;
    expect(bill).toBeDefined();
    const entries = await books.ledgerByReference([requestId]);
    expect(entries.map((entry) => entry.kind)).toEqual(['usage']);
    return { bill, debited: -BigInt(entries[0].amount) };
  }

  function expectBillOf(bill: Bill, split: Split, cost: bigint): void {
    expect(bill).toMatchObject({
      promptTokens: split.prompt,
      completionTokens: split.completion,
      cachedTokens: split.cached,
      cacheWriteTokens: split.cacheWrite,
      reasoningTokens: split.reasoning ?? 0,
      cost: formatUsd(cost),
    });
  }

  it('should keep the split prices on the model, and refuse a malformed one naming it', async () => {
    const models = (await gateway.admin('GET', '/admin/models')).body.data as Record<string, unknown>[];
    expect(models.find((model) => model.id === splitModel.openai)).toMatchObject({
      inputPrice: '3',
      cachedInputPrice: '0.3',
      cacheWriteInputPrice: '3.75',
    });
    expect(models.find((model) => model.id === plainModel.openai)).toMatchObject({
      cachedInputPrice: null,
      cacheWriteInputPrice: null,
    });

    const refused = await gateway.admin('PUT', '/admin/models/bad-cached-price', {
      ...PLAIN_PRICES,
      cachedInputPrice: '-1',
      maxOutputTokens: 10,
      rpm: 1,
      tpm: 1,
      routes: [],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', param: 'cachedInputPrice' });
    const cleared = await gateway.admin('PUT', '/admin/models/cleared-prices', {
      ...SPLIT_PRICES,
      cachedInputPrice: null,
      maxOutputTokens: 10,
      rpm: 1,
      tpm: 1,
      routes: [],
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ cachedInputPrice: null, cacheWriteInputPrice: '3.75' });
  });

  describe.each(DIALECTS)('through a %s channel', (dialect) => {
    const split = EXPECTED[dialect];

    it('should show the details in the JSON answer and bill each part at its own price, to the nano-dollar', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });

      const { data, response } = await clientOf(customer)
        .chat.completions.create({ model: splitModel[dialect], messages })
        .withResponse();

      expect(data.usage).toEqual(wireUsage(split));
      const cost = splitCost(split);
      const { bill, debited } = await settled(customer, response.headers.get('x-request-id')!);
      expectBillOf(bill, split, cost);
      expect(debited).toBe(cost);
      expect(await books.waitForBalance(customer, usd('10') - cost)).toBe(usd('10') - cost);
      const usage = await gateway.call('GET', '/console/usage?groupBy=model', { token: customer.token });
      expect(usage.body.data).toEqual([
        {
          model: splitModel[dialect],
          requests: 1,
          promptTokens: split.prompt,
          completionTokens: split.completion,
          cachedTokens: split.cached,
          cacheWriteTokens: split.cacheWrite,
          reasoningTokens: split.reasoning ?? 0,
          cost: formatUsd(cost),
        },
      ]);
    });

    it("should show the details in the stream's usage chunk and bill the stream the same", async () => {
      const customer = await gateway.newCustomer({ balance: '10' });

      const { data: stream, response } = await clientOf(customer)
        .chat.completions.create({
          model: splitModel[dialect],
          messages,
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();
      const usages: unknown[] = [];
      let text = '';
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) {
          usages.push(chunk.usage);
        }
      }

      expect(text).toBe(mockPieces().join(''));
      expect(usages).toEqual([wireUsage(split)]);
      const { bill, debited } = await settled(customer, response.headers.get('x-request-id')!);
      expectBillOf(bill, split, splitCost(split));
      expect(debited).toBe(splitCost(split));
    });

    it('should bill as before, every prompt token at the input price, when the model has no split prices', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });

      const { data, response } = await clientOf(customer)
        .chat.completions.create({ model: plainModel[dialect], messages })
        .withResponse();

      expect(data.usage).toEqual(wireUsage(split));
      // CONTRACT: prompt × input price / 1e6 + completion × output price / 1e6, rounded up.
      const today = usageCost(
        pricesOf(PLAIN_PRICES.inputPrice, PLAIN_PRICES.outputPrice),
        split.prompt,
        split.completion,
      );
      expect(today).toBeGreaterThan(splitCost(split));
      const { bill, debited } = await settled(customer, response.headers.get('x-request-id')!);
      expectBillOf(bill, split, today);
      expect(debited).toBe(today);
    });
  });

  it('should hold every prompt token at the cache-write price when that is above the input price', async () => {
    const held = userMessages('Hold this prompt');
    const maxTokens = 10;
    const atInputPrice = usageCost(pricesOf('3', '15'), estimatePromptTokens(held), maxTokens);
    const customer = await gateway.newCustomer({ balance: formatUsd(atInputPrice) });
    const body = { messages: held, max_tokens: maxTokens };

    const refused = await gateway.chat(customer.key, { ...body, model: splitModel.openai });
    const served = await gateway.chat(customer.key, { ...body, model: plainModel.openai });

    // A write price of 3.75 could make the bill exceed a hold at the input price of 3.
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'insufficient_balance' });
    expect(served.status).toBe(200);
  });

  describe('Anthropic prompt caching', () => {
    const ephemeral = { type: 'ephemeral' };
    const tool = {
      type: 'function',
      function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
      cache_control: ephemeral,
    };
    const cached = [
      { role: 'system', content: [{ type: 'text', text: 'Long instructions', cache_control: ephemeral }] },
      { role: 'user', content: [{ type: 'text', text: 'Question one', cache_control: { ...ephemeral, ttl: '1h' } }] },
      { role: 'assistant', content: 'Answer one' },
      { role: 'user', content: 'Question two', cache_control: ephemeral },
    ];
    const request = (model: string) =>
      ({ model, messages: cached, tools: [tool] }) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;

    it('should pass cache_control breakpoints to Anthropic on the system prompt, messages and tools', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });

      await clientOf(customer).chat.completions.create(request(splitModel.anthropic));

      const sent = gateway.mock.requests.at(-1)!.body as Record<string, unknown>;
      expect(sent.system).toEqual([{ type: 'text', text: 'Long instructions', cache_control: ephemeral }]);
      expect(sent.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Question one', cache_control: { ...ephemeral, ttl: '1h' } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Answer one' }] },
        { role: 'user', content: [{ type: 'text', text: 'Question two', cache_control: ephemeral }] },
      ]);
      expect(sent.tools).toEqual([
        { name: 'lookup', input_schema: tool.function.parameters, cache_control: ephemeral },
      ]);
    });

    it('should keep them away from Gemini, which has no such field', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });

      await clientOf(customer).chat.completions.create(request(splitModel.gemini));

      const sent = gateway.mock.requests.at(-1)!;
      expect(sent.path).toContain(':generateContent');
      expect(sent.rawBody).not.toContain('cache_control');
    });
  });
});
