import Redis from 'ioredis';
import { formatUsd } from 'src/common/money/money';
import { BillingQueue } from 'src/modules/billing/billing.queue';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { ApiProcess, exchange, killApiProcess, startApiProcess } from 'test/e2e/api-process-helpers';
import {
  BillingWorld,
  Books,
  costOf,
  eventually,
  openBillingWorld,
  requestIdOf,
  usageRecordFailures,
  usageRecordFailuresSince,
  userMessages,
  wireUsageOf,
} from 'test/e2e/billing-helpers';
import { isUsageRecord, recordAsEval, RedisFaultProxy } from 'test/e2e/redis-fault-proxy';
import { parseEventStream, TestGateway } from 'test/support/gateway';

/** Below the recorder's reply deadline (1 s): the record is confirmed, late, without a retry. */
const REPLY_DELAY_MS = 800;
const REDIS_URL = process.env.REDIS_URL as string;

/**
 * The API reaches the run's Redis through a proxy of the test's own that can hold back the reply to
 * a usage record, or answer it with an error; the worker reaches Redis directly.
 */
describe('billing: an answer does not wait for Redis to answer its usage record', () => {
  let proxy: RedisFaultProxy;
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  let model: string;
  let api: ApiProcess | null = null;

  beforeAll(async () => {
    proxy = await RedisFaultProxy.start(Number(new URL(REDIS_URL).port));
    world = await openBillingWorld('2.5', '10', {}, { REDIS_URL: proxy.through(REDIS_URL) });
    ({ gateway, books, model } = world);
  });
  afterEach(async () => {
    proxy.rule = null;
    await killApiProcess(api);
    api = null;
    await books.expectBalanced();
  });
  afterAll(async () => {
    await world.close();
    await proxy.close();
  });

  it.each([
    ['JSON', false],
    ['event stream', true],
  ])(
    'should end the %s answer before Redis replies to its usage record, and bill it once',
    async (_, stream) => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const failuresBefore = await usageRecordFailures();
      const releases = proxy.releasedAt.length;
      proxy.rule = { matches: isUsageRecord, delayRepliesMs: REPLY_DELAY_MS };

      const startedAt = Date.now();
      const response = await gateway.chat(customer.key, {
        model,
        messages: userMessages(),
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      });
      const answeredAt = Date.now();

      expect(response.status).toBe(200);
      const usage = stream ? parseEventStream(response.text).chunks.at(-1).usage : response.body.usage;
      if (stream) {
        expect(parseEventStream(response.text).done).toBe(true);
      }
      const repliedAt = await eventually(
        () => Promise.resolve(proxy.releasedAt[releases]),
        (at) => at !== undefined,
      );
      // The client had the whole answer before the record's reply left the proxy, and well within its delay.
      expect(answeredAt).toBeLessThan(repliedAt);
      expect(answeredAt - startedAt).toBeLessThan(REPLY_DELAY_MS);
      const expected = before - costOf(world.prices, wireUsageOf(usage));
      expect(formatUsd(await books.waitForBalance(customer, expected))).toBe(formatUsd(expected));
      expect(await books.waitForBills(customer, 1)).toHaveLength(1);
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
      // Late, but within the deadline: no retry, no fallback.
      expect(await usageRecordFailuresSince(failuresBefore)).toEqual({});
    },
    20_000,
  );

  it('should settle in Postgres once when Redis answers the record with errors, and not again when the record appears', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);
    const failuresBefore = await usageRecordFailures();
    const refusedBefore = proxy.refused.length;
    proxy.rule = { matches: isUsageRecord, refuse: true };

    const response = await gateway.chat(customer.key, { model, messages: userMessages() });

    expect(response.status).toBe(200);
    const requestId = requestIdOf(response);
    const expected = before - costOf(world.prices, wireUsageOf(response.body.usage));
    expect(formatUsd(await books.waitForBalance(customer, expected))).toBe(formatUsd(expected));
    proxy.rule = null;
    // The bounded attempts on Redis, each refused; then settlement's transaction, from the API.
    expect(proxy.refused.length - refusedBefore).toBe(3);
    // The counter moves just after settlement's commit, which the balance already shows: wait for it.
    const failures = await eventually(
      () => usageRecordFailuresSince(failuresBefore),
      (counted) => Object.keys(counted).length > 0,
    );
    expect(failures).toEqual({ fallback_settled: 1 });
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    expect(await books.usageRecords([requestId])).toHaveLength(1);
    expect((await books.ledgerByReference([requestId])).map((entry) => entry.kind)).toEqual(['usage']);

    // The record reaches Redis after all, as a refused command that had run would have left it.
    const direct = new Redis(REDIS_URL);
    try {
      await direct.call(...(recordAsEval(proxy.refused[refusedBefore]) as [string, ...string[]]));
    } finally {
      await direct.quit();
    }
    expect(await books.recordedUsage(customer.accountId, requestId)).toMatchObject({ requestId });
    // Such a record ran before the API saw its refusal, and the API listed the account after that
    // (UsageQueueService.recordUsage); replayed only now, it is listed again as the workers' repair does.
    await gateway.app.get(UsageQueueService).repairRegistry();
    await gateway.app.get(BillingQueue).enqueueSettlement();

    // A worker claims it, finds it settled, charges nothing, and removes it.
    expect(await books.waitForSettled(customer.accountId, requestId)).toBeNull();
    expect(formatUsd(await books.balance(customer))).toBe(formatUsd(expected));
    expect(await books.usageRecords([requestId])).toHaveLength(1);
    expect((await books.ledgerByReference([requestId])).map((entry) => entry.kind)).toEqual(['usage']);
    expect(await books.reserved(customer.accountId)).toBe(0n);
  }, 20_000);

  it('should wait on SIGTERM for a usage it is still recording, settle it in Postgres, then exit 0', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);
    api = await startApiProcess({ REDIS_URL: proxy.through(REDIS_URL), SHUTDOWN_GRACE_MS: '10000' });
    // Refused, and the refusal later than the recorder's deadline: the usage is pending for a while.
    proxy.rule = { matches: isUsageRecord, refuse: true, delayRepliesMs: 1_500 };

    const answer = await exchange(api.url, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${customer.key}` },
      body: { model, messages: userMessages() },
    });
    if (!('status' in answer)) {
      throw new Error(`no answer: ${answer.error}`);
    }
    expect(answer.status).toBe(200);
    api.child.kill('SIGTERM');

    expect(await api.exited).toBe(0);
    const output = api.output();
    const drainingAt = output.indexOf('"draining"');
    const settledAt = output.indexOf('usage settled straight into Postgres');
    expect({ drainingAt: drainingAt >= 0, settledAfterIt: settledAt > drainingAt }).toEqual({
      drainingAt: true,
      settledAfterIt: true,
    });
    // The record never reached Redis: only the API's fallback could bill it, and did, once.
    const requestId = String(answer.headers['x-request-id']);
    expect(await books.usageRecords([requestId])).toHaveLength(1);
    const expected = before - costOf(world.prices, wireUsageOf(answer.body.usage));
    expect(formatUsd(await books.balance(customer))).toBe(formatUsd(expected));
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
  }, 60_000);
});
