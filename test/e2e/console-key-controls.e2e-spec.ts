import OpenAI, { APIError } from 'openai';
import { formatUsd } from 'src/common/money/money';
import { REDIS } from 'src/common/redis/redis.tokens';
import { Prices, usageCost } from 'src/modules/billing/pricing';
import { estimatePromptTokens } from 'src/modules/billing/token-estimator';
import { balanceKeys, keySpendField } from 'src/modules/ledger/balance-gate.keys';
import Redis from 'ioredis';
import {
  BillingWorld,
  Books,
  costOf,
  eventually,
  expectApiError,
  openBillingWorld,
  sleep,
  usd,
  userMessages,
  wireUsageOf,
} from 'test/e2e/billing-helpers';
import { expectError } from 'test/e2e/e2e-helpers';
import { Customer, HttpResult, TestGateway } from 'test/support/gateway';

const INPUT_PRICE = '1.000003';
const OUTPUT_PRICE = '100.000007';
const MAX_TOKENS = 100;

describe('console key controls', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  let model: string;
  let prices: Prices;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE, { maxOutputTokens: 1000, rpm: 100_000 });
    ({ gateway, books, prices, model } = world);
  });
  afterEach(() => books.expectBalanced());
  afterAll(() => world.close());

  const createKey = (customer: Customer, body: Record<string, unknown>) =>
    gateway.call('POST', '/console/keys', { token: customer.token, body: { name: 'limited', ...body } });
  const patchKey = (customer: Customer, keyId: string, body: Record<string, unknown>) =>
    gateway.call('PATCH', `/console/keys/${keyId}`, { token: customer.token, body });
  const keyOf = async (customer: Customer, keyId: string) =>
    (await gateway.call('GET', '/console/keys', { token: customer.token })).body.data.find(
      (key: { id: string }) => key.id === keyId,
    );
  const clientWith = (apiKey: string, on = gateway) => new OpenAI({ apiKey, baseURL: `${on.url}/v1`, maxRetries: 0 });
  const holdOf = (messages: { role: string; content: string }[]) =>
    usageCost(prices, estimatePromptTokens(messages), MAX_TOKENS);

  /** The APIError the official client throws for `promise`; fails the test if it resolves. */
  async function clientError(promise: Promise<unknown>): Promise<APIError> {
    try {
      await promise;
    } catch (error) {
      expect(error).toBeInstanceOf(APIError);
      return error as APIError;
    }
    throw new Error('expected the request to fail');
  }

  function expectForbidden(error: APIError, code: string): void {
    expect({ status: error.status, type: error.type, code: error.code }).toEqual({
      status: 403,
      type: 'invalid_request_error',
      code,
    });
  }

  describe('fields', () => {
    it('should create a key with an expiry, allowed models and a spend limit, and show them with spent', async () => {
      const customer = await gateway.newCustomer();
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const created = await createKey(customer, { expiresAt, allowedModels: [model, model], spendLimit: '12.5' });

      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        name: 'limited',
        expiresAt,
        allowedModels: [model],
        spendLimit: '12.5',
        spent: '0',
      });
      expect(await keyOf(customer, created.body.id)).toEqual({ ...created.body, key: undefined });
      // A key without controls has none, and spent too.
      expect(await keyOf(customer, customer.keyId)).toMatchObject({
        expiresAt: null,
        allowedModels: null,
        spendLimit: null,
        spent: '0',
      });
    });

    it('should rename a key, change its controls, and clear each with null', async () => {
      const customer = await gateway.newCustomer();
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const changed = await patchKey(customer, customer.keyId, {
        name: 'ci',
        expiresAt,
        allowedModels: [model],
        spendLimit: '0.000000001',
      });
      expect(changed.status).toBe(200);
      expect(changed.body).toMatchObject({ name: 'ci', status: 'enabled', expiresAt, spendLimit: '0.000000001' });

      const cleared = await patchKey(customer, customer.keyId, {
        expiresAt: null,
        allowedModels: null,
        spendLimit: null,
      });
      expect(cleared.body).toMatchObject({ name: 'ci', expiresAt: null, allowedModels: null, spendLimit: null });
      expect(await keyOf(customer, customer.keyId)).toEqual(cleared.body);
    });

    it.each([
      ['an expiry in the past', { expiresAt: new Date(Date.now() - 1000).toISOString() }, 'expiresAt'],
      ['an expiry that is no time', { expiresAt: 'tomorrow' }, 'expiresAt'],
      ['an unknown model', { allowedModels: ['no-such-model'] }, 'allowedModels'],
      ['an empty model list', { allowedModels: [] }, 'allowedModels'],
      ['a model id that is no string', { allowedModels: [42] }, 'allowedModels'],
      ['a spend limit of zero', { spendLimit: '0' }, 'spendLimit'],
      ['a spend limit over $1,000,000', { spendLimit: '1000000.000000001' }, 'spendLimit'],
      ['a negative spend limit', { spendLimit: '-1' }, 'spendLimit'],
      ['a spend limit as a number', { spendLimit: 5 }, 'spendLimit'],
      ['a spend limit with 10 decimals', { spendLimit: '1.0000000001' }, 'spendLimit'],
    ])(
      'should answer 400 naming the field for %s, on create and on change, changing nothing',
      async (_c, body, param) => {
        const customer = await gateway.newCustomer();
        const before = await keyOf(customer, customer.keyId);

        expectError(await createKey(customer, body), 400, { param });
        expectError(await patchKey(customer, customer.keyId, { name: 'renamed', ...body }), 400, { param });
        const keys = await gateway.call('GET', '/console/keys', { token: customer.token });
        expect(keys.body.data).toEqual([before]);
      },
    );
  });

  describe('expiry', () => {
    it('should refuse an expired key with 403 api_key_expired, to the official client', async () => {
      const customer = await gateway.newCustomer();
      const expiresAt = new Date(Date.now() + 1_500).toISOString();
      const created = await createKey(customer, { expiresAt });
      const client = clientWith(created.body.key);
      // Used (and cached) before it expires.
      expect((await client.models.list()).data.map((entry) => entry.id)).toContain(model);

      await sleep(Date.parse(expiresAt) - Date.now() + 50);
      expectForbidden(await clientError(client.models.list()), 'api_key_expired');
      const chat = client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
      expectForbidden(await clientError(chat), 'api_key_expired');

      // Extending it brings it back at once.
      const extended = await patchKey(customer, created.body.id, {
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
      });
      expect(extended.status).toBe(200);
      expect((await client.models.list()).data.length).toBeGreaterThan(0);
    });
  });

  describe('allowed models', () => {
    it('should refuse other models with 403 model_not_permitted and list only the allowed ones', async () => {
      const other = await gateway.addModel({ inputPrice: INPUT_PRICE, outputPrice: OUTPUT_PRICE });
      const customer = await gateway.newCustomer();
      const created = await createKey(customer, { allowedModels: [model] });
      const client = clientWith(created.body.key);
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

      const refused = await clientError(client.chat.completions.create({ model: other, messages }));
      expectForbidden(refused, 'model_not_permitted');
      expect(refused.param).toBe('model');
      expect((await client.chat.completions.create({ model, messages })).choices[0].message.role).toBe('assistant');
      expect((await client.models.list()).data.map((entry) => entry.id)).toEqual([model]);
      // The key without controls sees both.
      const ids = (await clientWith(customer.key).models.list()).data.map((entry) => entry.id);
      expect(ids).toEqual(expect.arrayContaining([model, other]));
    });

    it('should apply a change at once in another API process that had the key cached', async () => {
      const other = await gateway.addModel({ inputPrice: INPUT_PRICE, outputPrice: OUTPUT_PRICE });
      const customer = await gateway.newCustomer();
      const second = await TestGateway.start();
      try {
        const client = clientWith(customer.key, second);
        const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];
        expect((await client.chat.completions.create({ model: other, messages })).object).toBe('chat.completion');

        expect((await patchKey(customer, customer.keyId, { allowedModels: [model] })).status).toBe(200);
        const refused = await eventually(
          () => clientError(client.chat.completions.create({ model: other, messages })).catch((e: Error) => e),
          (error) => error instanceof APIError,
          5_000,
        );
        expectForbidden(refused as APIError, 'model_not_permitted');
        expect((await client.models.list()).data.map((entry) => entry.id)).toEqual([model]);
      } finally {
        await second.close();
      }
    });
  });

  describe('spend limit', () => {
    it('should admit while the limit covers the hold, then refuse with 403 key_spend_limit_reached', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const messages = userMessages('Spend a little');
      const hold = holdOf(messages);
      // Room for one worst case: after its charge, not for another.
      const created = await createKey(customer, { spendLimit: formatUsd(hold + 1n) });
      const client = clientWith(created.body.key);
      const body = { model, messages: messages as OpenAI.ChatCompletionMessageParam[], max_tokens: MAX_TOKENS };

      const first = await client.chat.completions.create(body);
      const cost = costOf(prices, wireUsageOf(first.usage!));
      expect(cost).toBeLessThan(hold);
      const settled = await eventually(
        () => keyOf(customer, created.body.id),
        (key) => key.spent !== '0',
        10_000,
      );
      expect(settled.spent).toBe(formatUsd(cost));
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);

      const refused = await clientError(client.chat.completions.create(body));
      expectForbidden(refused, 'key_spend_limit_reached');
      expect(refused.message).toContain(`$${formatUsd(hold + 1n)}`);
      // The account's other key is not limited, and the balance was not the reason.
      expect((await gateway.chat(customer.key, body)).status).toBe(200);

      // Raised, it admits again; cleared, there is no limit left.
      await patchKey(customer, created.body.id, { spendLimit: formatUsd(cost + hold) });
      expect((await client.chat.completions.create(body)).object).toBe('chat.completion');
      await eventually(
        () => keyOf(customer, created.body.id),
        (key) => usd(key.spent) > cost,
        10_000,
      );
      expectForbidden(await clientError(client.chat.completions.create(body)), 'key_spend_limit_reached');
      await patchKey(customer, created.body.id, { spendLimit: null });
      expect((await client.chat.completions.create(body)).object).toBe('chat.completion');
    });

    it('should admit exactly as many of 30 concurrent requests as the limit covers, across two API processes', async () => {
      const customer = await gateway.newCustomer({ balance: '100' });
      const messages = userMessages('One of thirty on one key');
      const hold = holdOf(messages);
      const fits = 4;
      // Room for `fits` worst cases and one nano-dollar short of another; the balance covers all 30.
      const limit = hold * BigInt(fits + 1) - 1n;
      const created = await createKey(customer, { spendLimit: formatUsd(limit) });
      const second = await TestGateway.start();
      let responses: HttpResult[];
      try {
        // The upstream answers late, so every request is admitted or refused before any hold is released.
        responses = await Promise.all(
          Array.from({ length: 30 }, (_, index) =>
            (index % 3 ? gateway : second).chat(created.body.key, {
              model,
              messages,
              max_tokens: MAX_TOKENS,
              ...(index % 2 ? { stream: true } : {}),
              mock: { latency_ms: 1500 },
            }),
          ),
        );
      } finally {
        await second.close();
      }

      const admitted = responses.filter((response) => response.status === 200);
      expect(admitted).toHaveLength(fits);
      for (const response of responses.filter((r) => r.status !== 200)) {
        expectApiError(response, 403, { code: 'key_spend_limit_reached' });
      }
      const bills = await books.waitForBills(customer, fits);
      const spent = bills.reduce((total, bill) => total + usd(bill.cost), 0n);
      expect(spent).toBeLessThanOrEqual(limit);
      const key = await eventually(
        () => keyOf(customer, created.body.id),
        (current) => current.spent === formatUsd(spent),
        10_000,
      );
      expect(key.spent).toBe(formatUsd(spent));
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
      const redis = gateway.app.get<Redis>(REDIS);
      expect(
        await redis.hget(balanceKeys(customer.accountId).keySpend, keySpendField(created.body.id, 'reserved')),
      ).toBe('0');
    });

    it('should reload what a key spent from Postgres when Redis lost it, and still refuse past the limit', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const messages = userMessages('Remember me');
      const hold = holdOf(messages);
      const created = await createKey(customer, { spendLimit: formatUsd(hold + 1n) });
      const body = { model, messages, max_tokens: MAX_TOKENS };
      expect((await gateway.chat(created.body.key, body)).status).toBe(200);
      const settled = await eventually(
        () => keyOf(customer, created.body.id),
        (key) => key.spent !== '0',
        10_000,
      );
      await books.waitForNoHolds(customer.accountId);

      const redis = gateway.app.get<Redis>(REDIS);
      const { keySpend } = balanceKeys(customer.accountId);
      const fields = (['spent', 'reserved', 'epoch'] as const).map((field) => keySpendField(created.body.id, field));
      expect(await redis.hdel(keySpend, ...fields)).toBe(3);
      expectApiError(await gateway.chat(created.body.key, body), 403, { code: 'key_spend_limit_reached' });
      expect(await redis.hget(keySpend, keySpendField(created.body.id, 'spent'))).toBe(usd(settled.spent).toString());
    });
  });
});
