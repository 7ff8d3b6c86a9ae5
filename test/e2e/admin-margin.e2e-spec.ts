import { randomUUID } from 'node:crypto';
import { formatUsd } from 'src/common/money/money';
import { usageCost } from 'src/modules/billing/pricing';
import { SettlementBatchService } from 'src/modules/billing/settlement-batch.service';
import { CatalogService } from 'src/modules/models/catalog.service';
import { expectError } from 'test/e2e/e2e-helpers';
import { Books, pricesOf, usd, userMessages } from 'test/e2e/billing-helpers';
import { TestGateway, TestWorker } from 'test/support/gateway';

interface Route {
  channelId: string;
  costInputPrice?: string;
  costOutputPrice?: string;
}

/**
 * GET /admin/reports/margin: revenue from what settlement charged, upstream cost from each route's
 * cost prices, both from the per-channel rollup, exact to the nano-dollar.
 */
describe('admin: the margin report', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  const prices = pricesOf('3', '15');
  const dayBefore = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const range = `from=${dayBefore(-1)}&to=${dayBefore(1)}`;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    worker = await TestWorker.start();
    books = await Books.open(gateway);
  });
  afterAll(async () => {
    await books.close();
    await worker.close();
    await gateway.close();
  });

  /** A model with one route on a fresh channel of the mock, priced 3/15 to customers. */
  async function modelOn(route: Route): Promise<string> {
    const id = `margin-${randomUUID().slice(0, 8)}`;
    await gateway.addChannel(route.channelId, { baseUrl: `${gateway.mock.url}/v1` });
    const saved = await gateway.admin('PUT', `/admin/models/${id}`, {
      inputPrice: '3',
      outputPrice: '15',
      maxOutputTokens: 1000,
      rpm: 1000,
      tpm: 10_000_000,
      routes: [{ upstreamModel: 'mock-gpt', ...route }],
    });
    expect(saved.status).toBe(200);
    expect(saved.body.routes).toEqual([
      {
        channelId: route.channelId,
        upstreamModel: 'mock-gpt',
        costInputPrice: route.costInputPrice ?? null,
        costOutputPrice: route.costOutputPrice ?? null,
        costCachedInputPrice: null,
        costCacheWriteInputPrice: null,
      },
    ]);
    await gateway.app.get(CatalogService).reload();
    return id;
  }

  it('should give revenue, upstream cost and margin per model and channel, exact, and no margin where a cost is unknown', async () => {
    const suffix = randomUUID().slice(0, 8);
    const cheap = { channelId: `cheap-${suffix}`, costInputPrice: '1.000000001', costOutputPrice: '7' };
    const dear = { channelId: `dear-${suffix}`, costInputPrice: '2.5', costOutputPrice: '12.123456789' };
    const unpriced = { channelId: `unpriced-${suffix}` };
    const models = [await modelOn(cheap), await modelOn(dear), await modelOn(unpriced)];
    const customer = await gateway.newCustomer({ balance: '20' });

    const usages: { model: string; prompt: number; completion: number }[] = [];
    for (const [index, model] of [models[0], models[0], models[1], models[2], models[1]].entries()) {
      const content = `Say hi ${'again '.repeat(index * 3)}`;
      const response = await gateway.chat(customer.key, { model, messages: userMessages(content) });
      expect(response.status).toBe(200);
      usages.push({
        model,
        prompt: response.body.usage.prompt_tokens,
        completion: response.body.usage.completion_tokens,
      });
    }
    await books.waitForBills(customer, usages.length);

    const report = await gateway.admin('GET', `/admin/reports/margin?${range}&groupBy=model,channel`);
    expect(report.status).toBe(200);
    const mine = report.body.data.filter((row: { model: string }) => models.includes(row.model));
    const expected = ([cheap, dear, unpriced] as Route[]).map((route, index) => {
      const served = usages.filter((usage) => usage.model === models[index]);
      const revenue = served.reduce((sum, u) => sum + usageCost(prices, u.prompt, u.completion), 0n);
      if (route.costInputPrice === undefined || route.costOutputPrice === undefined) {
        return {
          model: models[index],
          channelId: route.channelId,
          revenue: formatUsd(revenue),
          upstreamCost: null,
          margin: null,
          costKnown: false,
          uncostedRequests: served.length,
          uncostedRevenue: formatUsd(revenue),
          knownUpstreamCost: '0',
          knownMargin: '0',
        };
      }
      const cost = pricesOf(route.costInputPrice, route.costOutputPrice);
      const upstream = served.reduce((sum, u) => sum + usageCost(cost, u.prompt, u.completion), 0n);
      return {
        model: models[index],
        channelId: route.channelId,
        revenue: formatUsd(revenue),
        upstreamCost: formatUsd(upstream),
        margin: formatUsd(revenue - upstream),
        costKnown: true,
        uncostedRequests: 0,
        uncostedRevenue: '0',
        knownUpstreamCost: formatUsd(upstream),
        knownMargin: formatUsd(revenue - upstream),
      };
    });
    expect(mine).toEqual(
      [...expected]
        .sort((x, y) => x.model.localeCompare(y.model))
        .map((row) => expect.objectContaining(row) as unknown),
    );
    const totalRevenue = usages.reduce((sum, u) => sum + usageCost(prices, u.prompt, u.completion), 0n);
    const bills = await books.bills(customer);
    expect(bills.reduce((sum, bill) => sum + usd(bill.cost), 0n)).toBe(totalRevenue);

    // By day alone, the unknown cost of one channel leaves the day's margin unknown, not inflated.
    const byDay = await gateway.admin('GET', `/admin/reports/margin?${range}`);
    expect(byDay.body.data.every((row: { date: string }) => /^\d{4}-\d{2}-\d{2}$/.test(row.date))).toBe(true);
    expect(byDay.body.total).toMatchObject({ costKnown: false, upstreamCost: null, margin: null });
  });

  it('should count a retried settlement once', async () => {
    const channelId = `once-${randomUUID().slice(0, 8)}`;
    const model = await modelOn({ channelId, costInputPrice: '1', costOutputPrice: '1' });
    const customer = await gateway.newCustomer({ balance: '5' });
    const response = await gateway.chat(customer.key, { model, messages: userMessages() });
    expect(response.status).toBe(200);
    await books.waitForBills(customer, 1);
    const rowOf = async () =>
      (await gateway.admin('GET', `/admin/reports/margin?${range}&groupBy=model`)).body.data.find(
        (row: { model: string }) => row.model === model,
      );
    const before = await rowOf();

    // The same request settled again (a worker that died after its commit): nothing changes.
    const record = (
      await books.db.query<{ created_at: Date }[]>('SELECT created_at FROM usage_records WHERE request_id = $1', [
        response.headers.get('x-request-id'),
      ])
    )[0];
    expect(record).toBeDefined();
    await worker.app.get(SettlementBatchService).settle([
      {
        requestId: response.headers.get('x-request-id')!,
        accountId: customer.accountId,
        keyId: customer.keyId,
        modelId: model,
        channelId,
        inputPrice: '3000000000',
        outputPrice: '15000000000',
        promptTokens: response.body.usage.prompt_tokens,
        completionTokens: response.body.usage.completion_tokens,
        usageSource: 'upstream',
        status: 'completed',
        upstreamLatencyMs: 1,
        createdAt: record.created_at.toISOString(),
      },
    ]);
    expect(await rowOf()).toEqual(before);
    expect(before).toMatchObject({ requests: 1, costKnown: true });
  });

  it('should refuse a bad groupBy, a half-priced route and an unordered range, naming the parameter', async () => {
    expectError(await gateway.admin('GET', '/admin/reports/margin?groupBy=day,key'), 400, { param: 'groupBy' });
    expectError(await gateway.admin('GET', '/admin/reports/margin?from=2026-11-20&to=2026-11-01'), 400, {
      param: 'from',
    });
    await gateway.addChannel(`half-${randomUUID().slice(0, 8)}`, { baseUrl: `${gateway.mock.url}/v1` });
    const channels = (await gateway.admin('GET', '/admin/channels')).body.data as { id: string }[];
    const half = await gateway.admin('PUT', `/admin/models/half-${randomUUID().slice(0, 8)}`, {
      inputPrice: '1',
      outputPrice: '1',
      maxOutputTokens: 10,
      rpm: 1,
      tpm: 1,
      routes: [{ channelId: channels[0].id, upstreamModel: 'x', costInputPrice: '1' }],
    });
    expectError(half, 400, { param: 'routes[0].costOutputPrice' });
    const negative = await gateway.admin('PUT', `/admin/models/neg-${randomUUID().slice(0, 8)}`, {
      inputPrice: '1',
      outputPrice: '1',
      maxOutputTokens: 10,
      rpm: 1,
      tpm: 1,
      routes: [{ channelId: channels[0].id, upstreamModel: 'x', costInputPrice: '-1', costOutputPrice: '1' }],
    });
    expect(negative.status).toBe(400);
  });
});
