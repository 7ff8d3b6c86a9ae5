import Redis from 'ioredis';
import { formatUsd } from 'src/common/money/money';
import { REDIS } from 'src/common/redis/redis.tokens';
import { HoldSweeperService } from 'src/modules/billing/hold-sweeper.service';
import {
  Books,
  costOf,
  eventually,
  pricesOf,
  requestIdOf,
  usageRecordFailures,
  usageRecordFailuresSince,
  usd,
  userMessages,
  wireUsageOf,
} from 'test/e2e/billing-helpers';
import { composeRedisArgs, OwnRedis } from 'test/e2e/outage-helpers';
import { isUsageRecord, RedisFaultProxy } from 'test/e2e/redis-fault-proxy';
import { parseEventStream, TestGateway, TestWorker } from 'test/support/gateway';

const INPUT_PRICE = '2.5';
const OUTPUT_PRICE = '10';
const prices = pricesOf(INPUT_PRICE, OUTPUT_PRICE);
const REQUESTS = 8;

/**
 * A Redis of the test's own, run as docker/compose.yaml runs it (AOF), SIGKILLed the moment the
 * first usage record reaches it; the API reaches it through a proxy of the test's own that sees the
 * record pass, the worker directly.
 */
describe('billing: Redis killed the moment a usage is recorded', () => {
  let redis: OwnRedis;
  let proxy: RedisFaultProxy;
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;

  beforeAll(async () => {
    redis = await OwnRedis.start(composeRedisArgs());
    proxy = await RedisFaultProxy.start(redis.port);
    gateway = await TestGateway.start({ REDIS_URL: proxy.through(redis.url) });
    worker = await TestWorker.start({ REDIS_URL: redis.url });
    books = await Books.open(gateway);
    model = await gateway.addModel({ inputPrice: INPUT_PRICE, outputPrice: OUTPUT_PRICE });
  }, 60_000);
  afterEach(() => books.expectBalanced());
  afterAll(async () => {
    await books.close();
    await worker.close();
    await gateway.close();
    await proxy.close();
    await redis.close();
  });

  it('should answer every admitted request and bill each exactly once, settling in Postgres what Redis did not take', async () => {
    const customer = await gateway.newCustomer({ balance: '100' });
    const before = await books.balance(customer);
    const failuresBefore = await usageRecordFailures();
    let killed: Promise<void> = Promise.resolve();
    proxy.rule = {
      matches: isUsageRecord,
      onSeen: () => {
        proxy.rule = null;
        killed = redis.kill();
      },
    };

    // All admitted at once, all answered by the upstream a second later: their records meet a dead Redis.
    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) =>
        gateway.chat(customer.key, {
          model,
          messages: userMessages(`client ${i}`),
          mock: { latency_ms: 1_000 },
          ...(i % 2 === 1 ? { stream: true, stream_options: { include_usage: true } } : {}),
        }),
      ),
    );
    await killed;

    // The clients got whole answers though Redis was gone when they ended.
    expect(responses.map((response) => response.status)).toEqual(Array(REQUESTS).fill(200));
    const costs = new Map(
      responses.map((response) => {
        const stream = parseEventStream(response.text);
        const usage = response.body.usage ?? stream.chunks.at(-1)?.usage;
        expect(response.body.usage !== undefined || stream.done).toBe(true);
        return [requestIdOf(response), costOf(prices, wireUsageOf(usage))];
      }),
    );
    const ids = [...costs.keys()];
    // While Redis stays down, the API settles them in Postgres itself: all but one at most, the
    // record that reached Redis before the kill, if Redis had answered it.
    const settledMeanwhile = await eventually(
      () => books.usageRecords(ids),
      (rows) => rows.length === ids.length,
      15_000,
      100,
    );
    expect(settledMeanwhile.length).toBeGreaterThanOrEqual(ids.length - 1);
    expect((await usageRecordFailuresSince(failuresBefore)).fallback_settled).toBeGreaterThanOrEqual(ids.length - 1);

    // Redis comes back from its AOF with the holds, and any record it kept: found settled, charged nothing again.
    await redis.restart();
    const apiRedis = gateway.app.get<Redis>(REDIS);
    await eventually(
      () => Promise.resolve(apiRedis.status),
      (status) => status === 'ready',
      10_000,
      20,
    );
    const sweeper = worker.app.get(HoldSweeperService);
    const reserved = await eventually(
      async () => {
        try {
          await sweeper.closeSettled(0);
          return await books.reserved(customer.accountId);
        } catch {
          return -1n; // still reconnecting
        }
      },
      (left) => left === 0n,
      20_000,
      250,
    );
    expect(reserved).toBe(0n);

    const records = await eventually(
      () => books.usageRecords(ids),
      (rows) => rows.length === ids.length,
      15_000,
    );
    expect(Object.fromEntries(records.map((row) => [row.request_id, BigInt(row.charged)]))).toEqual(
      Object.fromEntries(costs),
    );
    const entries = await books.ledgerByReference(ids);
    expect(entries.map((entry) => entry.kind)).toEqual(Array(REQUESTS).fill('usage'));
    const charged = [...costs.values()].reduce((sum, cost) => sum + cost, 0n);
    expect(formatUsd(await books.balance(customer))).toBe(formatUsd(before - charged));
    expect(before - charged).toBeLessThan(usd('100'));

    // And the next request is admitted on the right balance and billed as usual.
    const next = await eventually(
      () => gateway.chat(customer.key, { model, messages: userMessages('After the outage') }),
      (response) => response.status === 200,
      15_000,
      250,
    );
    expect(next.status).toBe(200);
    const after = before - charged - costOf(prices, wireUsageOf(next.body.usage));
    expect(formatUsd(await books.waitForBalance(customer, after))).toBe(formatUsd(after));
  }, 120_000);
});
