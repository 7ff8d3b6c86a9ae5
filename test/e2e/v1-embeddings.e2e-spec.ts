import OpenAI from 'openai';
import pino from 'pino';
import { estimateEmbeddingTokens } from 'src/modules/billing/token-estimator';
import { BillingWorld, costOf, expectApiError, openBillingWorld, requestIdOf, usd } from 'test/e2e/billing-helpers';
import { Customer, TestGateway } from 'test/support/gateway';
import {
  countMockEmbeddingTokens,
  float32Base64,
  MOCK_EMBEDDING_DIMENSIONS,
  mockEmbedding,
} from 'tools/mock-upstream/mock-embeddings';

const INPUT_PRICE = '0.02';

/** A float32 vector as the client decodes it (the mock's values are exact in float32). */
const asFloats = (values: ArrayLike<number>) => Array.from(values);

describe('POST /v1/embeddings', () => {
  let world: BillingWorld;
  let model: string;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, '0', { kind: 'embedding' });
    model = world.model;
  });
  afterAll(() => world.close());

  const clientOf = (customer: Customer) =>
    new OpenAI({ apiKey: customer.key, baseURL: `${world.gateway.url}/v1`, maxRetries: 0 });
  const embed = (customer: Customer, body: Record<string, unknown>) =>
    world.gateway.call('POST', '/v1/embeddings', { token: customer.key, body });
  const sentSince = (count: number) => world.gateway.mock.requests.slice(count);

  /** The balance the worker leaves after billing `promptTokens` input tokens of a $10 account. */
  const expectBilled = async (customer: Customer, promptTokens: number) => {
    const cost = costOf(world.prices, { promptTokens, completionTokens: 0 });
    expect(await world.books.waitForBalance(customer, usd('10') - cost)).toBe(usd('10') - cost);
    return cost;
  };

  describe('with the official openai client', () => {
    it('should embed a string (the client asks base64 and decodes it) and bill its tokens exactly', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const input = 'The food was delicious and the waiter was kind.';

      const answer = await clientOf(customer).embeddings.create({ model, input });

      expect(answer).toMatchObject({ object: 'list', model, usage: { prompt_tokens: 9, total_tokens: 9 } });
      expect(answer.data).toHaveLength(1);
      expect(asFloats(answer.data[0].embedding)).toEqual(mockEmbedding(input));
      const cost = await expectBilled(customer, 9);
      const [bill] = await world.books.waitForBills(customer, 1);
      expect(bill).toMatchObject({ model, promptTokens: 9, completionTokens: 0, cost: expect.any(String) });
      expect(usd(bill.cost)).toBe(cost);
      const usage = (await world.books.ledger(customer)).filter((entry) => entry.kind === 'usage');
      expect(usage).toEqual([expect.objectContaining({ amount: `-${bill.cost}`, reference: bill.requestId })]);
      await world.books.expectBalanced();
    });

    it('should embed an array of strings as floats, one vector per input in order', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const input = ['first text', 'the second one', 'third'];

      const answer = await clientOf(customer).embeddings.create({ model, input, encoding_format: 'float' });

      expect(answer.data.map((item) => [item.index, item.embedding])).toEqual(
        input.map((text, i) => [i, mockEmbedding(text)]),
      );
      await expectBilled(customer, countMockEmbeddingTokens(input));
    });

    it('should answer base64 as asked, and pass dimensions and user on', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const before = world.gateway.mock.requests.length;

      const answer = await clientOf(customer).embeddings.create({
        model,
        input: 'shorter vectors please',
        encoding_format: 'base64',
        dimensions: 4,
        user: 'end-user-7',
      });

      expect(answer.data[0].embedding).toBe(float32Base64(mockEmbedding('shorter vectors please', 4)));
      const [sent] = sentSince(before);
      expect(sent.path).toBe('/v1/embeddings');
      expect(sent.body).toEqual({
        model: 'mock-gpt',
        input: 'shorter vectors please',
        encoding_format: 'base64',
        dimensions: 4,
        user: 'end-user-7',
      });
      expect(sent.rawBody).not.toContain(customer.key);
    });

    it('should embed token arrays, billed by their length', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });

      const answer = await clientOf(customer).embeddings.create({
        model,
        input: [
          [1, 2, 3],
          [4, 5],
        ],
      });

      expect(asFloats(answer.data[1].embedding)).toEqual(mockEmbedding([4, 5]));
      expect(answer.usage.prompt_tokens).toBe(5);
      await expectBilled(customer, 5);
    });

    it('should throw BadRequestError naming model for a chat model', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const chatModel = await world.gateway.addModel();

      const error = await clientOf(customer)
        .embeddings.create({ model: chatModel, input: 'x' })
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'model' });
    });
  });

  describe('refusals', () => {
    it('should refuse an embedding model on chat completions with a 400 naming model', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });

      const response = await world.gateway.chat(customer.key, {
        model,
        messages: [{ role: 'user', content: 'hi' }],
      });

      expectApiError(response, 400, { code: null, param: 'model' });
    });

    it('should refuse bad inputs with a 400 naming the field, relaying nothing', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const before = world.gateway.mock.requests.length;

      for (const [body, param] of [
        [{ model }, 'input'],
        [{ model, input: '' }, 'input'],
        [{ model, input: [] }, 'input'],
        [{ model, input: ['ok', 3] }, 'input'],
        [{ model, input: Array.from({ length: 2049 }, () => 'x') }, 'input'],
        [{ model, input: 'x', encoding_format: 'int8' }, 'encoding_format'],
        [{ model, input: 'x', dimensions: -1 }, 'dimensions'],
        [{ input: 'x' }, 'model'],
        [{ model: 'no-such-model', input: 'x' }, 'model'],
      ] as const) {
        expectApiError(await embed(customer, body), 400, { code: null, param });
      }
      expect(sentSince(before)).toEqual([]);
    });

    it('should refuse a model whose only routes are Anthropic channels with a 400 naming model', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      await world.gateway.addChannel('claude-embed', { type: 'anthropic', baseUrl: `${world.gateway.mock.url}/v1` });
      const claude = await world.gateway.addModel({
        kind: 'embedding',
        routes: [{ channelId: 'claude-embed', upstreamModel: 'claude' }],
      });

      expectApiError(await embed(customer, { model: claude, input: 'x' }), 400, { code: null, param: 'model' });
    });

    it('should answer 403 insufficient_balance and relay nothing when the balance cannot cover the input', async () => {
      const customer = await world.gateway.newCustomer({ balance: '0.000001' });
      const before = world.gateway.mock.requests.length;
      // About 2,000 tokens at $0.02 per million: $0.00004, above the balance.
      const input = Array.from({ length: 20 }, () => 'word '.repeat(100));

      const response = await embed(customer, { model, input });

      expectApiError(response, 403, { code: 'insufficient_balance' });
      expect(sentSince(before)).toEqual([]);
      expect(await world.books.reserved(customer.accountId)).toBe(0n);
    });
  });

  describe('upstream faults', () => {
    it('should fail over to the next route when the first answers 500, and bill once', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      await world.gateway.addChannel('embed-broken', {
        baseUrl: `${world.gateway.mock.url}/status/500/v1`,
        priority: 5,
      });
      await world.gateway.addChannel('embed-good', { baseUrl: `${world.gateway.mock.url}/v1`, priority: 0 });
      const failover = await world.gateway.addModel({
        kind: 'embedding',
        inputPrice: INPUT_PRICE,
        outputPrice: '0',
        routes: [
          { channelId: 'embed-broken', upstreamModel: 'mock-embed' },
          { channelId: 'embed-good', upstreamModel: 'mock-embed' },
        ],
      });
      const before = world.gateway.mock.requests.length;

      const response = await embed(customer, { model: failover, input: 'one two three' });

      expect(response.status).toBe(200);
      expect(sentSince(before).map((request) => request.path)).toEqual(['/status/500/v1/embeddings', '/v1/embeddings']);
      await expectBilled(customer, 3);
      expect(await world.books.waitForBills(customer, 1)).toHaveLength(1);
    });

    it('should relay an upstream 400 as a 400, bill nothing and give the hold back', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });

      const response = await embed(customer, { model, input: 'x', mock: { status: 400, error_message: 'bad dims' } });

      expectApiError(response, 400, { code: null, param: null });
      expect(response.body.error.message).toBe('bad dims');
      expect(await world.books.waitForNoHolds(customer.accountId)).toBe(0n);
      expect(await world.books.balance(customer)).toBe(usd('10'));
    });

    it('should bill the estimate it held when the upstream reports no usage, and tell the client so', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const input = 'no usage from this upstream';

      const response = await embed(customer, { model, input, mock: { omit_usage: true } });

      const estimate = estimateEmbeddingTokens([input]);
      expect(response.status).toBe(200);
      expect(response.body.usage).toEqual({ prompt_tokens: estimate, total_tokens: estimate });
      await expectBilled(customer, estimate);
      const [record] = await world.books.usageRecords([requestIdOf(response)]);
      expect(record).toMatchObject({ usage_source: 'estimated', prompt_tokens: estimate, completion_tokens: 0 });
    });
  });

  describe('Gemini channels', () => {
    let gemini: string;

    beforeAll(async () => {
      await world.gateway.addChannel('gemini-embed', {
        type: 'gemini',
        baseUrl: `${world.gateway.mock.url}/v1beta`,
        apiKey: 'gemini-upstream-key-00000',
      });
      gemini = await world.gateway.addModel({
        kind: 'embedding',
        inputPrice: INPUT_PRICE,
        outputPrice: '0',
        routes: [{ channelId: 'gemini-embed', upstreamModel: 'text-embedding-004' }],
      });
    });

    it('should translate to batchEmbedContents and answer in OpenAI’s shape, billed at the estimate', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });
      const input = ['alpha beta', 'gamma'];
      const before = world.gateway.mock.requests.length;

      const response = await embed(customer, { model: gemini, input, dimensions: 5, user: 'u' });

      expect(response.status).toBe(200);
      const [sent] = sentSince(before);
      expect(sent.path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
      expect(sent.headers['x-goog-api-key']).toBe('gemini-upstream-key-00000');
      expect(sent.body).toEqual({
        requests: input.map((text) => ({
          model: 'models/text-embedding-004',
          content: { parts: [{ text }] },
          outputDimensionality: 5,
        })),
      });
      const estimate = estimateEmbeddingTokens(input);
      expect(response.body).toEqual({
        object: 'list',
        model: gemini,
        data: input.map((text, index) => ({ object: 'embedding', index, embedding: mockEmbedding(text, 5) })),
        usage: { prompt_tokens: estimate, total_tokens: estimate },
      });
      await expectBilled(customer, estimate);
    });

    it('should produce base64 itself for the openai client, whose default asks for it', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });

      const answer = await clientOf(customer).embeddings.create({ model: gemini, input: 'gamma delta' });

      expect(asFloats(answer.data[0].embedding)).toEqual(mockEmbedding('gamma delta', MOCK_EMBEDDING_DIMENSIONS));
    });

    it('should refuse token ids, which Gemini cannot take, with a 400 naming input', async () => {
      const customer = await world.gateway.newCustomer({ balance: '10' });

      expectApiError(await embed(customer, { model: gemini, input: [1, 2, 3] }), 400, { code: null, param: 'input' });
    });
  });

  describe('content', () => {
    it('should log neither the inputs nor the vectors, even at debug and across a failover', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
      const gateway = await TestGateway.start({}, logger);
      try {
        await gateway.addChannel('log-broken', { baseUrl: `${gateway.mock.url}/status/503/v1`, priority: 5 });
        await gateway.addChannel('log-good', { baseUrl: `${gateway.mock.url}/v1` });
        const logged = await gateway.addModel({
          kind: 'embedding',
          routes: [
            { channelId: 'log-broken', upstreamModel: 'mock-embed' },
            { channelId: 'log-good', upstreamModel: 'mock-embed' },
          ],
        });
        const customer = await gateway.newCustomer({ balance: '10' });
        const secret = 'confidential-embedding-input-7f3a';

        const response = await gateway.call('POST', '/v1/embeddings', {
          token: customer.key,
          body: { model: logged, input: [secret], encoding_format: 'base64' },
        });

        expect(response.status).toBe(200);
        const everything = lines.join('\n');
        expect(everything).toContain('upstream route failed');
        expect(everything).not.toContain(secret);
        expect(everything).not.toContain(response.body.data[0].embedding);
        expect(everything).not.toContain(customer.key);
      } finally {
        await gateway.close();
      }
    });
  });
});
