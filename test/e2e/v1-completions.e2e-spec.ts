import OpenAI from 'openai';
import pino from 'pino';
import { formatUsd } from 'src/common/money/money';
import { countCompletionTokens, estimateEmbeddingTokens } from 'src/modules/billing/token-estimator';
import {
  BillingWorld,
  costOf,
  expectApiError,
  MOCK_DEFAULT_REPLY,
  mockPieces,
  openBillingWorld,
  requestIdOf,
  usd,
  Usage,
} from 'test/e2e/billing-helpers';
import { Customer, TestGateway } from 'test/support/gateway';

// Prices whose products are not whole nano-dollars, so every cost goes through the round-up.
const INPUT_PRICE = '1.500001';
const OUTPUT_PRICE = '2.000003';
const words = (text: string) => text.match(/\S+/g)?.length ?? 0;

/** The legacy POST /v1/completions through the official openai client and raw HTTP, billed exactly. */
describe('POST /v1/completions (legacy)', () => {
  let world: BillingWorld;
  let model: string;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE, { kind: 'completion', maxOutputTokens: 1000 });
    model = world.model;
  });
  afterEach(() => world.books.expectBalanced());
  afterAll(() => world.close());

  const clientOf = (customer: Customer) =>
    new OpenAI({ apiKey: customer.key, baseURL: `${world.gateway.url}/v1`, maxRetries: 0 });
  const complete = (customer: Customer, body: Record<string, unknown>) =>
    world.gateway.call('POST', '/v1/completions', { token: customer.key, body });
  const sentSince = (count: number) => world.gateway.mock.requests.slice(count);

  /** The one bill of a fresh $10 customer, once settled: its tokens, its exact cost, and the balance after it. */
  async function expectBilled(customer: Customer, usage: Usage) {
    const cost = costOf(world.prices, usage);
    const [bill] = await world.books.waitForBills(customer, 1);
    expect(bill).toMatchObject({ model, ...usage, cost: formatUsd(cost) });
    expect(await world.books.waitForBalance(customer, usd('10') - cost)).toBe(usd('10') - cost);
    expect(await world.books.waitForNoHolds(customer.accountId)).toBe(0n);
    return bill;
  }

  describe('with the official openai client', () => {
    it('should complete a string prompt, relayed with max_tokens 16 made explicit, and bill it exactly', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const before = world.gateway.mock.requests.length;
      const prompt = 'Say this is a test';

      const answer = await clientOf(customer).completions.create({ model, prompt, temperature: 0.2, seed: 7 });

      const usage = { promptTokens: words(prompt), completionTokens: mockPieces().length };
      expect(answer).toMatchObject({
        object: 'text_completion',
        model,
        usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens },
      });
      expect(answer.choices).toEqual([
        expect.objectContaining({ index: 0, text: MOCK_DEFAULT_REPLY, finish_reason: 'stop' }),
      ]);
      const [sent] = sentSince(before);
      expect(sent.path).toBe('/v1/completions');
      expect(sent.body).toEqual({ model: 'mock-gpt', prompt, temperature: 0.2, seed: 7, max_tokens: 16 });
      expect(sent.rawBody).not.toContain(customer.key);
      const bill = await expectBilled(customer, usage);
      const usageEntries = (await world.books.ledger(customer)).filter((entry) => entry.kind === 'usage');
      expect(usageEntries).toEqual([expect.objectContaining({ amount: `-${bill.cost}`, reference: bill.requestId })]);
    });

    it('should answer every prompt of an array with n choices each, and bill them all', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const prompt = ['one two', 'three four five'];

      const answer = await clientOf(customer).completions.create({ model, prompt, n: 2, max_tokens: 50 });

      expect(answer.choices.map((choice) => [choice.index, choice.text])).toEqual(
        [0, 1, 2, 3].map((index) => [index, MOCK_DEFAULT_REPLY]),
      );
      await expectBilled(customer, { promptTokens: 5, completionTokens: mockPieces().length * 4 });
    });

    it('should stream text_completion chunks with our model id, asking upstream for usage it then hides', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const before = world.gateway.mock.requests.length;

      const stream = await clientOf(customer).completions.create({ model, prompt: 'Stream me please', stream: true });
      const chunks = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
      }

      expect(chunks.map((chunk) => chunk.choices[0]?.text).join('')).toBe(MOCK_DEFAULT_REPLY);
      expect(chunks.every((chunk) => chunk.model === model && chunk.object === 'text_completion')).toBe(true);
      expect(chunks.some((chunk) => 'usage' in chunk && chunk.usage)).toBe(false);
      expect(sentSince(before)[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      await expectBilled(customer, { promptTokens: 3, completionTokens: mockPieces().length });
    });

    it('should end the stream with the usage chunk when the client asks for it', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });

      const stream = await clientOf(customer).completions.create({
        model,
        prompt: ['a b', 'c'],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
      }

      const usage = { promptTokens: 3, completionTokens: mockPieces().length * 2 };
      expect(chunks.at(-1)).toMatchObject({
        model,
        choices: [],
        usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens },
      });
      await expectBilled(customer, usage);
    });

    it('should throw BadRequestError naming model for a chat model', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const chatModel = await world.gateway.addModel();

      const error = await clientOf(customer)
        .completions.create({ model: chatModel, prompt: 'x' })
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'model' });
      expect((error as Error).message).toContain('POST /v1/chat/completions');
    });
  });

  describe('refusals', () => {
    it('should refuse a completion model on chat, the Responses API and embeddings with a 400 naming model', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });

      const chat = await world.gateway.chat(customer.key, { model, messages: [{ role: 'user', content: 'hi' }] });
      const embeddings = await world.gateway.call('POST', '/v1/embeddings', {
        token: customer.key,
        body: { model, input: 'x' },
      });

      const responses = await world.gateway.call('POST', '/v1/responses', {
        token: customer.key,
        body: { model, input: 'x' },
      });

      expectApiError(chat, 400, { code: null, param: 'model' });
      expectApiError(embeddings, 400, { code: null, param: 'model' });
      expectApiError(responses, 400, { code: null, param: 'model' });
      expect(chat.body.error.message).toContain('POST /v1/completions');
    });

    it('should refuse a completion model served only by Anthropic or Gemini channels with a 400 naming model', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      await world.gateway.addChannel('claude-legacy', { type: 'anthropic', baseUrl: `${world.gateway.mock.url}/v1` });
      await world.gateway.addChannel('gemini-legacy', { type: 'gemini', baseUrl: `${world.gateway.mock.url}/v1beta` });
      const elsewhere = await world.gateway.addModel({
        kind: 'completion',
        routes: [
          { channelId: 'claude-legacy', upstreamModel: 'claude' },
          { channelId: 'gemini-legacy', upstreamModel: 'gemini' },
        ],
      });
      const before = world.gateway.mock.requests.length;

      const response = await complete(customer, { model: elsewhere, prompt: 'x' });

      expectApiError(response, 400, { code: null, param: 'model' });
      expect(sentSince(before)).toEqual([]);
    });

    it('should refuse bad shapes with a 400 naming the field, relaying nothing', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const before = world.gateway.mock.requests.length;

      for (const [body, param] of [
        [{ model }, 'prompt'],
        [{ model, prompt: [] }, 'prompt'],
        [{ model, prompt: ['ok', 3] }, 'prompt'],
        [{ model, prompt: [[1], 'x'] }, 'prompt'],
        [{ model, prompt: 'x', max_tokens: 1001 }, 'max_tokens'],
        [{ model, prompt: 'x', max_tokens: -1 }, 'max_tokens'],
        [{ model, prompt: 'x', temperature: 3 }, 'temperature'],
        [{ model, prompt: 'x', n: 3, best_of: 2 }, 'best_of'],
        [{ model, prompt: 'x', stream: true, best_of: 2 }, 'best_of'],
        [{ model, prompt: 'x', logprobs: 6 }, 'logprobs'],
        [{ model, prompt: 'x', echo: 1 }, 'echo'],
        [{ model, prompt: 'x', logit_bias: { word: 1 } }, 'logit_bias'],
        [{ model, prompt: 'x', stop: [1] }, 'stop'],
        [{ model, prompt: 'x', suffix: 5 }, 'suffix'],
        [{ model, prompt: 'x', stream_options: { include_usage: true } }, 'stream_options'],
        [{ prompt: 'x' }, 'model'],
        [{ model: 'no-such-model', prompt: 'x' }, 'model'],
      ] as const) {
        expectApiError(await complete(customer, body), 400, { code: null, param });
      }
      expect(sentSince(before)).toEqual([]);
    });

    it('should hold max_tokens for every prompt × n × best_of: 403 insufficient_balance when that is too much', async () => {
      // 1000 tokens × 2 prompts × 2 × 4 = 16,000 output tokens at $2.000003 per million: about $0.032.
      const customer = await world.gateway.newCustomer({ balance: '0.03' });
      const before = world.gateway.mock.requests.length;
      const body = { model, prompt: ['a', 'b'], max_tokens: 1000, n: 2, best_of: 4 };

      expectApiError(await complete(customer, body), 403, { code: 'insufficient_balance' });
      expect(sentSince(before)).toEqual([]);
      const fewer = await complete(customer, { ...body, best_of: 3 });
      expect(fewer.status).toBe(200);
      expect(fewer.body.choices).toHaveLength(4);
    });
  });

  describe('upstream faults', () => {
    it('should fail over to the next route when the first answers 500, and bill once', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      await world.gateway.addChannel('legacy-broken', {
        baseUrl: `${world.gateway.mock.url}/status/500/v1`,
        priority: 5,
      });
      await world.gateway.addChannel('legacy-good', { baseUrl: `${world.gateway.mock.url}/v1`, priority: 0 });
      const failover = await world.gateway.addModel({
        kind: 'completion',
        inputPrice: INPUT_PRICE,
        outputPrice: OUTPUT_PRICE,
        routes: [
          { channelId: 'legacy-broken', upstreamModel: 'mock-instruct' },
          { channelId: 'legacy-good', upstreamModel: 'mock-instruct' },
        ],
      });
      const before = world.gateway.mock.requests.length;

      const response = await complete(customer, { model: failover, prompt: 'one two three' });

      expect(response.status).toBe(200);
      expect(response.body.model).toBe(failover);
      expect(sentSince(before).map((request) => request.path)).toEqual([
        '/status/500/v1/completions',
        '/v1/completions',
      ]);
      const cost = costOf(world.prices, { promptTokens: 3, completionTokens: mockPieces().length });
      expect(await world.books.waitForBalance(customer, usd('10') - cost)).toBe(usd('10') - cost);
      expect(await world.books.waitForBills(customer, 1)).toHaveLength(1);
    });

    it('should bill a stream cut mid-way for what was delivered, and end it with an error event', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const prompt = 'cut me short';
      const body = {
        model,
        prompt,
        stream: true,
        max_tokens: 20,
        mock: { reply: 'alpha beta gamma delta', break_after: 2 },
      };

      const response = await fetch(`${world.gateway.url}/v1/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();

      expect(response.status).toBe(200);
      expect(text).toContain('upstream_stream_broken');
      expect(text).not.toContain('[DONE]');
      const usage = {
        promptTokens: estimateEmbeddingTokens([prompt]),
        completionTokens: countCompletionTokens('alpha beta '),
      };
      await expectBilled(customer, usage);
      const [record] = await world.books.usageRecords([response.headers.get('x-request-id') ?? '']);
      expect(record).toMatchObject({ status: 'upstream_broken', usage_source: 'estimated' });
    });

    it('should bill its own count when the upstream reports no usage, and tell the client so', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const prompt = 'no usage here';

      const response = await complete(customer, { model, prompt, mock: { omit_usage: true } });

      const usage = {
        promptTokens: estimateEmbeddingTokens([prompt]),
        completionTokens: countCompletionTokens(MOCK_DEFAULT_REPLY),
      };
      expect(response.status).toBe(200);
      expect(response.body.usage).toEqual({
        prompt_tokens: usage.promptTokens,
        completion_tokens: usage.completionTokens,
        total_tokens: usage.promptTokens + usage.completionTokens,
      });
      await expectBilled(customer, usage);
      const [record] = await world.books.usageRecords([requestIdOf(response)]);
      expect(record).toMatchObject({ usage_source: 'estimated' });
    });

    it('should relay an upstream 400 as a 400, bill nothing and give the hold back', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });

      const response = await complete(customer, { model, prompt: 'x', mock: { status: 400, error_message: 'bad' } });

      expectApiError(response, 400, { code: null, param: null });
      expect(await world.books.waitForNoHolds(customer.accountId)).toBe(0n);
      expect(await world.books.balance(customer)).toBe(usd('10'));
    });
  });

  describe('content', () => {
    it('should log neither the prompt nor the completion, even at debug and across a failover', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
      const gateway = await TestGateway.start({}, logger);
      try {
        await gateway.addChannel('log-broken', { baseUrl: `${gateway.mock.url}/status/503/v1`, priority: 5 });
        await gateway.addChannel('log-good', { baseUrl: `${gateway.mock.url}/v1` });
        const logged = await gateway.addModel({
          kind: 'completion',
          routes: [
            { channelId: 'log-broken', upstreamModel: 'mock-instruct' },
            { channelId: 'log-good', upstreamModel: 'mock-instruct' },
          ],
        });
        const customer = await gateway.newCustomer({ balance: '10' });
        const secret = 'confidential-prompt-9c2e';
        const reply = 'confidential-completion-41d7';

        for (const stream of [false, true]) {
          const response = await fetch(`${gateway.url}/v1/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: logged, prompt: [secret], stream, mock: { reply } }),
          });
          expect(response.status).toBe(200);
          expect(await response.text()).toContain(reply);
        }

        const everything = lines.join('\n');
        expect(everything).toContain('upstream route failed');
        expect(everything).not.toContain(secret);
        expect(everything).not.toContain(reply);
        expect(everything).not.toContain(customer.key);
      } finally {
        await gateway.close();
      }
    });
  });
});
