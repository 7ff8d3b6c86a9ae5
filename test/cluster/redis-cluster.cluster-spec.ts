import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { formatUsd } from 'src/common/money/money';
import { isCluster, mastersOf, RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { HoldSweeperService } from 'src/modules/billing/hold-sweeper.service';
import { usageKeys } from 'src/modules/billing/usage-queue.keys';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { balanceKeys } from 'src/modules/ledger/balance-gate.keys';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { requestWindowKey, tokenWindowKey } from 'src/modules/rate-limits/rate-limit.keys';
import {
  Books,
  costOf,
  eventually,
  pricesOf,
  requestIdOf,
  SETTLE_TIMEOUT_MS,
  usd,
  userMessages,
  wireUsageOf,
} from 'test/e2e/billing-helpers';
import { TestGateway, TestWorker } from 'test/support/gateway';
import { DataSource } from 'typeorm';

/**
 * The gateway on the run's three-master Redis Cluster (cluster-global-setup.ts). A script or
 * MULTI whose keys span slots fails there with CROSSSLOT, and a key a script builds itself is
 * refused when it lives on another master: every path of a request (admission, recording,
 * settlement) and the worker's passes over all accounts must run here as on one Redis.
 */
describe('the gateway on a Redis Cluster', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let redis: RedisClient;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    worker = await TestWorker.start();
    books = await Books.open(gateway);
    redis = gateway.app.get<RedisClient>(REDIS);
  });
  afterAll(async () => {
    await books?.close();
    await worker?.close();
    await gateway?.close();
  });

  const slotOf = (key: string): Promise<number> => (redis as Cluster).cluster('KEYSLOT', key);

  it('should talk to a cluster of three masters', () => {
    expect(isCluster(redis)).toBe(true);
    expect(mastersOf(redis)).toHaveLength(3);
  });

  it('should bill a completion through a limited key to the nano-dollar, and close its hold', async () => {
    const model = await gateway.addModel({ inputPrice: '2.5', outputPrice: '10' });
    const customer = await gateway.newCustomer({ balance: '10' });
    // A spend limit makes the hold check and move the key's share, and settlement push its spent.
    const key = await gateway.call('POST', '/console/keys', {
      token: customer.token,
      body: { name: 'limited', spendLimit: '5' },
    });
    expect(key.status).toBe(201);

    const answer = await gateway.chat(key.body.key, { model, messages: userMessages() });

    expect(answer.status).toBe(200);
    const cost = costOf(pricesOf('2.5', '10'), wireUsageOf(answer.body.usage));
    expect(cost).toBeGreaterThan(0n);
    const balance = await eventually(
      () => books.balance(customer),
      (value) => value === usd('10') - cost,
      SETTLE_TIMEOUT_MS,
    );
    expect(balance).toBe(usd('10') - cost);
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    const bills = await books.bills(customer);
    expect(bills).toEqual([expect.objectContaining({ requestId: requestIdOf(answer), cost: formatUsd(cost) })]);
    const { holds } = balanceKeys(customer.accountId);
    expect(await redis.hlen(holds)).toBe(0);
    expect(await redis.hlen(usageKeys(customer.accountId).usage)).toBe(0);
    const dataSource = new DataSource({ type: 'postgres', url: process.env.DATABASE_URL });
    await dataSource.initialize();
    try {
      expect(await findLedgerMismatches(dataSource)).toEqual([]);
    } finally {
      await dataSource.destroy();
    }
  });

  it("should keep every key of one account's admission in one slot, and spread accounts over slots", async () => {
    const [one, other] = [randomUUID(), randomUUID()];
    const keysOf = (accountId: string) => [
      ...Object.values(balanceKeys(accountId)),
      ...Object.values(usageKeys(accountId)),
      requestWindowKey(accountId, 'gpt-x'),
      requestWindowKey(accountId, 'gpt-x', 'end-user-1'),
      tokenWindowKey(accountId, 'gpt-x', 29_000_000),
      tokenWindowKey(accountId, 'gpt-x', 29_000_000, 'end-user-1'),
    ];

    const slots = await Promise.all(keysOf(one).map(slotOf));
    const otherSlots = await Promise.all(keysOf(other).map(slotOf));

    expect(new Set(slots).size).toBe(1);
    expect(new Set(otherSlots).size).toBe(1);
    expect(slots[0]).not.toBe(otherSlots[0]);
  });

  it("should run the worker's passes over every account: sweep, backlog, resync and the registries' repair", async () => {
    const model = await gateway.addModel({ inputPrice: '1', outputPrice: '1' });
    const customers = await Promise.all([1, 2, 3, 4].map(() => gateway.newCustomer({ balance: '3' })));
    const answers = await Promise.all(
      customers.map((customer) => gateway.chat(customer.key, { model, messages: userMessages() })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const gate = worker.app.get(BalanceGateService);
    const usage = worker.app.get(UsageQueueService);
    const sweeper = worker.app.get(HoldSweeperService);
    // The customers' accounts are spread over the masters: each pass reaches more than one.
    const owners = await Promise.all(customers.map(({ accountId }) => slotOf(balanceKeys(accountId).snapshot)));
    expect(new Set(owners).size).toBeGreaterThan(1);

    for (const customer of customers) {
      await books.waitForNoHolds(customer.accountId);
    }
    // The passes are checked on a quiet Redis: usage earlier suites of the run recorded and left is
    // this worker's to settle, and its holds close with it.
    await eventually(
      () => usage.backlog(),
      ({ count }) => count === 0,
      SETTLE_TIMEOUT_MS,
    );
    await expect(sweeper.repairRegistries(Number.MAX_SAFE_INTEGER)).resolves.toBeUndefined();
    expect(await gate.staleHolds(0, 1_000)).toEqual([]);
    expect(await sweeper.sweep(0)).toBe(0);
    expect(await usage.backlog()).toEqual({ count: 0, oldestAgeMs: null });
    const snapshots = new Map(
      await Promise.all(
        customers.map(
          async (customer) => [customer.accountId, { balance: await books.balance(customer), version: 1n }] as const,
        ),
      ),
    );
    // Redis has every one of them at a later version already: none is behind.
    expect(await gate.resync(snapshots)).toBe(0);
  });
});
