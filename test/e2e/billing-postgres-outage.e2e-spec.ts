import Redis from 'ioredis';
import { formatUsd } from 'src/common/money/money';
import { BillingProcessor } from 'src/modules/billing/billing.processor';
import { USAGE_ACCOUNTS, usageKeys } from 'src/modules/billing/usage-queue.keys';
import { SettlementService } from 'src/modules/billing/settlement.service';
import {
  Books,
  costOf,
  eventually,
  pricesOf,
  requestIdOf,
  sleep,
  userMessages,
  wireUsageOf,
} from 'test/e2e/billing-helpers';
import { throughProxy, TcpProxy } from 'test/e2e/outage-helpers';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';

const INPUT_PRICE = '2.5';
const OUTPUT_PRICE = '10';
const CLIENTS = 6;
const OUTAGE_MS = 3_000;
/** issue 10: everything answered during the outage is billed this soon after Postgres returns. */
const BILLED_WITHIN_MS = 15_000;
/** More failed passes than the fast retries allow a usage that fails for a reason of its own. */
const OUTAGE_PASSES = 40;

interface Answer {
  status: number;
  requestId: string;
  cost: bigint;
}

describe('billing: Postgres goes away under load', () => {
  let proxy: TcpProxy;
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;

  beforeAll(async () => {
    const direct = new URL(process.env.DATABASE_URL!);
    proxy = await TcpProxy.start(Number(direct.port || 5432));
    // The API and the worker reach Postgres only through the proxy; the test's books read it directly.
    const env = { DATABASE_URL: throughProxy(process.env.DATABASE_URL!, proxy) };
    gateway = await TestGateway.start(env);
    worker = await TestWorker.start(env);
    books = await Books.open(gateway);
    model = await gateway.addModel({ inputPrice: INPUT_PRICE, outputPrice: OUTPUT_PRICE });
  });
  afterAll(async () => {
    await proxy.restore().catch(() => undefined);
    await books.close();
    await worker.close();
    await gateway.close();
    await proxy.close();
  });

  /** Clients sending completions back to back until `stop()`; every answer kept. */
  function load(customer: Customer) {
    const answers: Answer[] = [];
    let running = true;
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = 0; running; i++) {
        const response = await gateway.chat(customer.key, { model, messages: userMessages(`client ${client} #${i}`) });
        answers.push({
          status: response.status,
          requestId: response.headers.get('x-request-id') ?? '',
          cost:
            response.status === 200
              ? costOf(pricesOf(INPUT_PRICE, OUTPUT_PRICE), wireUsageOf(response.body.usage))
              : 0n,
        });
      }
    });
    return {
      answers,
      stop: async () => {
        running = false;
        await Promise.all(clients);
      },
    };
  }

  it('should bill every request answered during the outage within 15 s of its end, exactly once', async () => {
    const customer = await gateway.newCustomer({ balance: '100' });
    const before = await books.balance(customer);
    // Warm: the balance snapshot is in Redis and the key in the API's cache, as for any active customer.
    const first = await gateway.chat(customer.key, { model, messages: userMessages() });
    expect(first.status).toBe(200);
    const warm = {
      status: 200,
      requestId: requestIdOf(first),
      cost: costOf(pricesOf(INPUT_PRICE, OUTPUT_PRICE), wireUsageOf(first.body.usage)),
    };

    const traffic = load(customer);
    await sleep(500);
    await proxy.cut();
    const cutAt = traffic.answers.length;
    await sleep(OUTAGE_MS);
    const duringOutage = traffic.answers.slice(cutAt).filter((answer) => answer.status === 200);
    await proxy.restore();
    const restoredAt = Date.now();
    await sleep(500);
    await traffic.stop();

    // Admission needs no Postgres for a known account: the outage served completions.
    expect(duringOutage.length).toBeGreaterThan(CLIENTS);
    const answered = [warm, ...traffic.answers.filter((answer) => answer.status === 200)];
    const ids = answered.map((answer) => answer.requestId);
    const billed = await eventually(
      () => books.usageRecords(ids),
      (records) => records.length === ids.length,
      BILLED_WITHIN_MS - (Date.now() - restoredAt),
      100,
    );
    const billedAfterMs = Date.now() - restoredAt;
    expect({ billed: billed.length, withinMs: billedAfterMs <= BILLED_WITHIN_MS }).toEqual({
      billed: ids.length,
      withinMs: true,
    });

    const expected = answered.reduce((balance, answer) => balance - answer.cost, before);
    expect(formatUsd(await books.waitForBalance(customer, expected))).toBe(formatUsd(expected));
    const records = await books.usageRecordsOf(customer.accountId);
    expect(records.map((record) => record.request_id).sort()).toEqual([...ids].sort());
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    await books.expectBalanced();
  }, 60_000);

  it('should settle within seconds of a long outage ending, however many passes failed during it', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const consumer = worker.app.get(BillingProcessor).worker;
    const settlement = worker.app.get(SettlementService);
    const redis = new Redis(process.env.REDIS_URL!);
    await consumer.pause();
    try {
      const answer = await gateway.chat(customer.key, { model, messages: userMessages() });
      expect(answer.status).toBe(200);
      const requestId = requestIdOf(answer);
      // The answer leaves without waiting for the record's reply, and the account is listed for the
      // worker once that reply comes: a pass before then finds nothing to fail on.
      const listed = await eventually(
        () => redis.zscore(USAGE_ACCOUNTS, customer.accountId),
        (version) => version !== null,
        5_000,
      );
      expect(listed).not.toBeNull();
      await proxy.cut();
      try {
        // A long outage in fast motion: each pass finds the usage claimable (as it would be once its
        // backoff ran out) and fails on the unreachable database.
        for (let pass = 0; pass < OUTAGE_PASSES; pass++) {
          await redis.zadd(usageKeys(customer.accountId).due, 'XX', 0, requestId);
          const { settled, retryInMs } = await settlement.settleRecorded();
          expect({ settled, retrying: retryInMs !== null }).toEqual({ settled: 0, retrying: true });
        }
      } finally {
        await proxy.restore();
      }
      consumer.resume();

      // The worker's own passes (every 5 s) find it claimable again within the 8 s backoff cap.
      const billed = await eventually(
        () => books.usageRecords([requestIdOf(answer)]),
        (records) => records.length === 1,
        15_000,
        200,
      );
      expect(billed.map((record) => record.request_id)).toEqual([requestIdOf(answer)]);
    } finally {
      consumer.resume();
      await redis.quit();
    }
    await books.expectBalanced();
  }, 60_000);
});
