import { formatUsd } from 'src/common/money/money';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { usageCost } from 'src/modules/billing/pricing';
import { CatalogService } from 'src/modules/models/catalog.service';
import { eventually, expectError } from 'test/e2e/e2e-helpers';
import { Books, costOf, mockUsage, pricesOf, userMessages, wireUsageOf } from 'test/e2e/billing-helpers';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';

// Prices whose products are not whole nano-dollars, so each cost goes through the one round-up.
const INPUT_PRICE = '1.234567';
const OUTPUT_PRICE = '3.000001';
const PROPAGATION_MS = 1_000;

/**
 * Account groups on two API processes sharing Postgres and Redis and a worker that settles: the
 * multiplier is what the customer pays, in the hold and the charge, and a change reaches both
 * processes' key caches.
 */
describe('account groups: tiers of prices and limits', () => {
  let a: TestGateway;
  let b: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;
  const prices = pricesOf(INPUT_PRICE, OUTPUT_PRICE);

  beforeAll(async () => {
    [a, b] = await Promise.all([TestGateway.start(), TestGateway.start()]);
    worker = await TestWorker.start();
    books = await Books.open(a);
    model = await a.addModel({ inputPrice: INPUT_PRICE, outputPrice: OUTPUT_PRICE, maxOutputTokens: 1000 });
    // B hears of the model over the bus; reloading here only saves waiting for it.
    await b.app.get(CatalogService).reload();
  });
  afterAll(async () => {
    await books.close();
    await worker.close();
    await Promise.all([a.close(), b.close()]);
  });

  const putGroup = (id: string, body: Record<string, unknown>) => a.admin('PUT', `/admin/groups/${id}`, body);
  const moveTo = (customer: Customer, groupId: string) =>
    a.admin('PUT', `/admin/accounts/${customer.accountId}/group`, { groupId });

  it('should create, list, change and delete groups, and refuse what is not a group', async () => {
    const created = await putGroup('resellers', { priceMultiplier: '0.75', description: 'Wholesale', rpm: 3000 });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ id: 'resellers', priceMultiplier: '0.75', rpm: 3000, tpm: null, accounts: 0 });

    const changed = await putGroup('resellers', { priceMultiplier: '0.700000' });
    expect(changed.body).toMatchObject({ priceMultiplier: '0.7', description: '', rpm: null });
    // No key's cache holds a description: changing only it (the same multiplier, written another way)
    // drops no cache; a new limit drops them all.
    const dropped = jest.spyOn(a.app.get(InvalidationBus), 'publishAll');
    try {
      const described = await putGroup('resellers', { priceMultiplier: '0.70', description: 'Resellers' });
      expect(described.body).toMatchObject({ priceMultiplier: '0.7', description: 'Resellers', rpm: null });
      expect(dropped).not.toHaveBeenCalled();
      await putGroup('resellers', { priceMultiplier: '0.7', description: 'Resellers', tpm: 100_000 });
      expect(dropped).toHaveBeenCalledWith(InvalidationTopic.ApiKey);
    } finally {
      dropped.mockRestore();
    }
    const listed = await a.admin('GET', '/admin/groups');
    expect(listed.body.data.map((group: { id: string }) => group.id)).toEqual(
      expect.arrayContaining(['default', 'resellers']),
    );
    expect(listed.body.data.find((group: { id: string }) => group.id === 'default')).toMatchObject({
      priceMultiplier: '1',
    });

    for (const priceMultiplier of ['0', '-1', '1.0000001', '100.5', '1e-2', 0.8]) {
      expectError(await putGroup('resellers', { priceMultiplier }), 400);
    }
    expectError(await putGroup('Not A Group', { priceMultiplier: '1' }), 400, { param: 'groupId' });
    expectError(await a.admin('GET', '/admin/groups/nobody'), 404, { code: 'not_found', param: 'groupId' });

    const customer = await a.newCustomer();
    expect((await moveTo(customer, 'resellers')).body).toMatchObject({ id: customer.accountId, groupId: 'resellers' });
    expectError(await moveTo(customer, 'nobody'), 404, { code: 'not_found', param: 'groupId' });
    expectError(await a.admin('DELETE', '/admin/groups/resellers'), 409, { code: 'group_in_use' });
    expectError(await a.admin('DELETE', '/admin/groups/default'), 409, { code: 'conflict' });

    await moveTo(customer, 'default');
    expect((await a.admin('DELETE', '/admin/groups/resellers')).status).toBe(204);
    expectError(await a.admin('GET', '/admin/groups/resellers'), 404, { code: 'not_found' });
    const audit = await a.admin('GET', '/admin/audit?targetType=account_group');
    const changes = audit.body.data.filter((entry: { targetId: string }) => entry.targetId === 'resellers');
    expect(changes.map((entry: { method: string }) => entry.method)).toEqual(expect.arrayContaining(['PUT', 'DELETE']));
    expect(changes.find((entry: { method: string }) => entry.method === 'DELETE').before).toMatchObject({
      price_multiplier: '0.700000',
    });
  });

  it('should bill the same request at 1× and at 0.8× to the nano-dollar, and show each account its own prices', async () => {
    await putGroup('wholesale', { priceMultiplier: '0.8' });
    const [retail, wholesale] = [await a.newCustomer({ balance: '10' }), await a.newCustomer({ balance: '10' })];
    expect((await moveTo(wholesale, 'wholesale')).status).toBe(200);
    const before = await books.balance(retail);
    const messages = userMessages('Say hi to the whole world');

    const [atOne, atWholesale] = [
      await a.chat(retail.key, { model, messages }),
      await a.chat(wholesale.key, { model, messages }),
    ];

    expect([atOne.status, atWholesale.status]).toEqual([200, 200]);
    const usage = wireUsageOf(atOne.body.usage);
    expect(wireUsageOf(atWholesale.body.usage)).toEqual(usage);
    expect(usage).toEqual(mockUsage(messages));
    const full = costOf(prices, usage);
    // One rounding of Σ tokens × price × 0.8: not 0.8 × the rounded full cost.
    const discounted = usageCost(prices, usage.promptTokens, usage.completionTokens, 800_000n);
    expect(discounted).toBeLessThan(full);
    expect(await books.waitForBalance(retail, before - full)).toBe(before - full);
    expect(await books.waitForBalance(wholesale, before - discounted)).toBe(before - discounted);
    const [bill] = await books.bills(wholesale);
    expect(bill.cost).toBe(formatUsd(discounted));

    const shown = await a.call('GET', '/console/models', { token: wholesale.token });
    expect(shown.body.data.find((entry: { id: string }) => entry.id === model)).toMatchObject({
      // 1.234567 × 0.8 and 3.000001 × 0.8, exactly.
      inputPrice: '0.9876536',
      outputPrice: '2.4000008',
    });
    const retailShown = await a.call('GET', '/console/models', { token: retail.token });
    expect(retailShown.body.data.find((entry: { id: string }) => entry.id === model)).toMatchObject({
      inputPrice: INPUT_PRICE,
      outputPrice: OUTPUT_PRICE,
    });
  });

  it("should hold at the group's prices, and move an account between groups on every process at its next request", async () => {
    await putGroup('premium', { priceMultiplier: '2' });
    // Enough for the hold of max_tokens 1000 at 1× (about $0.003), not at 2×.
    const customer = await a.newCustomer({ balance: '0.004' });
    const request = { model, messages: userMessages(), max_tokens: 1000 };
    // B caches the key at 1×: only the invalidation can make it hold at 2×.
    expect((await b.chat(customer.key, request)).status).toBe(200);

    expect((await moveTo(customer, 'premium')).status).toBe(200);
    const since = Date.now();
    const refused = await eventually(
      () => b.chat(customer.key, request),
      (response) => response.status === 403,
      PROPAGATION_MS,
      10,
    );
    expectError(refused, 403, { code: 'insufficient_balance' });
    expect(Date.now() - since).toBeLessThanOrEqual(PROPAGATION_MS + 200);
    expectError(await a.chat(customer.key, request), 403, { code: 'insufficient_balance' });

    expect((await moveTo(customer, 'default')).status).toBe(200);
    const servedAgain = await eventually(
      () => b.chat(customer.key, request),
      (response) => response.status === 200,
      PROPAGATION_MS,
      10,
    );
    expect(servedAgain.status).toBe(200);
  });

  it("should reach every process when a group's own terms change, and apply its default limits", async () => {
    await putGroup('tier', { priceMultiplier: '1' });
    const customer = await a.newCustomer({ balance: '0.004' });
    await moveTo(customer, 'tier');
    const request = { model, messages: userMessages(), max_tokens: 1000 };
    expect((await b.chat(customer.key, request)).status).toBe(200);

    await putGroup('tier', { priceMultiplier: '2' });
    const refused = await eventually(
      () => b.chat(customer.key, request),
      (response) => response.status === 403,
      PROPAGATION_MS,
      10,
    );
    expectError(refused, 403, { code: 'insufficient_balance' });

    // One request a minute for the group's accounts, on a model whose own default is higher.
    await putGroup('tier', { priceMultiplier: '1', rpm: 1 });
    const rich = await a.newCustomer({ balance: '5' });
    await moveTo(rich, 'tier');
    expect((await a.chat(rich.key, { model, messages: userMessages() })).status).toBe(200);
    const limited = await a.chat(rich.key, { model, messages: userMessages() });
    expectError(limited, 429, { type: 'requests', code: 'rate_limit_exceeded' });
    expect(limited.body.error.message).toMatch(/requests per minute/);
  });
});
