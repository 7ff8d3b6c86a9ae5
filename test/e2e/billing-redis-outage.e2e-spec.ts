import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { formatUsd } from 'src/common/money/money';
import { REDIS } from 'src/common/redis/redis.tokens';
import { BillingProcessor } from 'src/modules/billing/billing.processor';
import { HoldSweeperService } from 'src/modules/billing/hold-sweeper.service';
import { balanceKeys } from 'src/modules/ledger/balance-gate.keys';
import {
  Books,
  costOf,
  eventually,
  expectApiError,
  pricesOf,
  usd,
  userMessages,
  wireUsageOf,
} from 'test/e2e/billing-helpers';
import { Answer, exchange, startApiProcess } from 'test/e2e/api-process-helpers';
import { composeRedisArgs, OwnRedis, TcpProxy, throughProxy } from 'test/e2e/outage-helpers';
import { Customer, HttpResult, TestGateway, TestWorker } from 'test/support/gateway';

const INPUT_PRICE = '2.5';
const OUTPUT_PRICE = '10';
const prices = pricesOf(INPUT_PRICE, OUTPUT_PRICE);
const CLIENTS = 6;

/**
 * A Redis of the test's own, run as docker/compose.yaml runs it, with a TCP proxy in front: the API
 * and the worker reach it only through the proxy. Tests kill it, restart it, or cut the proxy.
 */
describe('billing: Redis dies, restarts, or comes back older', () => {
  let redis: OwnRedis;
  let proxy: TcpProxy;
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;

  beforeAll(async () => {
    redis = await OwnRedis.start(composeRedisArgs());
    proxy = await TcpProxy.start(redis.port);
    const env = { REDIS_URL: throughProxy(redis.url, proxy) };
    gateway = await TestGateway.start(env);
    worker = await TestWorker.start(env);
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

  /** Polls with a completion until Redis answers admissions again (no more 503). */
  async function waitForAdmissions(customer: Customer): Promise<HttpResult> {
    return eventually(
      () => gateway.chat(customer.key, { model, messages: userMessages('Are you back?'), max_tokens: 5 }),
      (response) => response.status !== 503 && response.status !== 500,
      20_000,
      200,
    );
  }

  it('should answer 201 to an adjustment committed while Redis is unreachable, and admit on it once Redis returns', async () => {
    const customer = await gateway.newCustomer({ balance: '0' });
    // The balance snapshot (zero) is in Redis now.
    expectApiError(await gateway.chat(customer.key, { model, messages: userMessages() }), 403, {
      code: 'insufficient_balance',
    });

    await proxy.cut();
    let credited: HttpResult;
    try {
      credited = await gateway.admin('POST', `/admin/accounts/${customer.accountId}/adjustments`, {
        amount: '1',
        reason: 'credit while Redis is away',
      });
    } finally {
      await proxy.restore();
    }

    expect({ status: credited.status, amount: credited.body.entry?.amount, balance: credited.body.balance }).toEqual({
      status: 201,
      amount: '1',
      balance: '1',
    });
    expect(await books.balance(customer)).toBe(usd('1'));
    // The same Redis comes back (no restart, same epoch): only the pushed balance can admit this.
    const admitted = await eventually(
      () => gateway.chat(customer.key, { model, messages: userMessages() }),
      (response) => response.status === 200,
      15_000,
      250,
    );
    expect(admitted.status).toBe(200);
    const expected = usd('1') - costOf(prices, wireUsageOf(admitted.body.usage));
    expect(formatUsd(await books.waitForBalance(customer, expected))).toBe(formatUsd(expected));
  }, 40_000);

  it('should limit admissions by a debit whose push to Redis was lost with the API process that made it', async () => {
    const customer = await gateway.newCustomer({ balance: '1' });
    const first = await gateway.chat(customer.key, { model, messages: userMessages() });
    expect(first.status).toBe(200);
    const settled = usd('1') - costOf(prices, wireUsageOf(first.body.usage));
    expect(await books.waitForBalance(customer, settled)).toBe(settled);
    // Another API process takes the operator's debit while Redis is unreachable, and dies before
    // Redis is back: its in-process retry of the push never happens.
    const adjuster = await startApiProcess({ REDIS_URL: throughProxy(redis.url, proxy) });
    let debited: Answer | { error: string };
    await proxy.cut();
    try {
      debited = await exchange(adjuster.url, {
        method: 'POST',
        path: `/admin/accounts/${customer.accountId}/adjustments`,
        headers: { authorization: `Bearer ${gateway.adminToken}` },
        body: { amount: `-${formatUsd(settled - usd('0.000001'))}`, reason: 'spent' },
      });
      adjuster.child.kill('SIGKILL');
      await adjuster.exited;
    } finally {
      adjuster.child.kill('SIGKILL');
      await proxy.restore();
    }
    expect('status' in debited ? debited.status : debited.error).toBe(201);
    expect(await books.balance(customer)).toBe(usd('0.000001'));

    // The same Redis (same run, same epoch) has the older balance: the worker's resync catches up.
    // Watched through a request no balance here covers, so nothing is admitted and settled meanwhile
    // (a settlement of the account would push the new balance too).
    const pricey = await gateway.addModel({ inputPrice: '1', outputPrice: '100000' });
    const refusal = await eventually(
      () => gateway.chat(customer.key, { model: pricey, messages: userMessages(), max_tokens: 100 }),
      (response) => response.status !== 403 || /\$0\.000001 is available/.test(response.body.error.message),
      30_000,
      500,
    );
    expectApiError(refusal, 403, { code: 'insufficient_balance' });
    expect(refusal.body.error.message).toContain('$0.000001 is available');
    expectApiError(await gateway.chat(customer.key, { model, messages: userMessages() }), 403, {
      code: 'insufficient_balance',
    });
  }, 60_000);

  it('should not admit a hold against restored data before the epoch check of the new connection has run', async () => {
    const customer = await gateway.newCustomer({ balance: '1' });
    const debited = await gateway.admin('POST', `/admin/accounts/${customer.accountId}/adjustments`, {
      amount: '-0.999999',
      reason: 'spent',
    });
    expect(debited.status).toBe(201);
    expectApiError(await gateway.chat(customer.key, { model, messages: userMessages() }), 403, {
      code: 'insufficient_balance',
    });
    // What a hold re-sent by the client right after a reconnect meets when Redis came back from an
    // older copy: that copy's snapshot ($1) and epoch, made under an earlier run of Redis. The API's
    // own epoch check for the new connection has not run yet (here: no reconnect at all).
    const direct = new Redis(redis.url);
    try {
      const { snapshot, epoch } = balanceKeys(customer.accountId);
      await direct.hset(snapshot, 'balance', usd('1').toString());
      await direct.hset(epoch, 'runId', 'an-earlier-run-of-redis');
    } finally {
      await direct.quit();
    }
    const sentUpstream = gateway.mock.requests.length;

    expectApiError(await gateway.chat(customer.key, { model, messages: userMessages() }), 403, {
      code: 'insufficient_balance',
    });
    expect(gateway.mock.requests.length).toBe(sentUpstream);
    expect(await books.balance(customer)).toBe(usd('0.000001'));
  }, 30_000);

  it('should bill every answered request exactly once after Redis is SIGKILLed under load and restarts from its AOF', async () => {
    const customer = await gateway.newCustomer({ balance: '100' });
    const before = await books.balance(customer);
    const answers: { status: number; requestId: string; cost: bigint }[] = [];
    let running = true;
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = 0; running; i++) {
        const response = await gateway.chat(customer.key, { model, messages: userMessages(`client ${client} #${i}`) });
        answers.push({
          status: response.status,
          requestId: response.headers.get('x-request-id') ?? '',
          cost: response.status === 200 ? costOf(prices, wireUsageOf(response.body.usage)) : 0n,
        });
      }
    });
    /** Waits (by answers, not time: the machine may be slow) until `count` more answers pass `test`. */
    const moreAnswers = async (count: number, test: (status: number) => boolean) => {
      const from = answers.length;
      const seen = () => answers.slice(from).filter((answer) => test(answer.status)).length;
      expect(
        await eventually(
          () => Promise.resolve(seen()),
          (n) => n >= count,
          30_000,
          20,
        ),
      ).toBeGreaterThanOrEqual(count);
    };
    const consumer = worker.app.get(BillingProcessor).worker;
    const apiRedis = gateway.app.get<Redis>(REDIS);
    let killed = false;
    try {
      await moreAnswers(CLIENTS, (status) => status === 200);
      // Settlement falls behind (as under a burst): the kill finds usage recorded and not settled.
      await consumer.pause();
      await moreAnswers(CLIENTS, (status) => status === 200);
      await redis.kill();
      killed = true;
      // Requests in flight now lose Redis mid-way; back once the API has seen it gone.
      await eventually(
        () => Promise.resolve(apiRedis.status),
        (status) => status !== 'ready',
        10_000,
        10,
      );
      await redis.restart();
      killed = false;
      consumer.resume();
      await moreAnswers(CLIENTS * 2, (status) => status === 200);
    } finally {
      running = false;
      if (killed) {
        await redis.restart();
      }
      consumer.resume();
      await Promise.all(clients);
    }
    // Holds of requests cut off by the kill are released by the sweeper, at the latest; the others
    // (usage recorded) once settled: after this, nothing is left to bill.
    await worker.app.get(HoldSweeperService).sweep(0);
    expect(await books.waitForNoHolds(customer.accountId, 30_000)).toBe(0n);

    const answered = answers.filter((answer) => answer.status === 200);
    const records = await books.usageRecordsOf(customer.accountId);
    const chargedById = new Map(records.map((record) => [record.request_id, BigInt(record.charged)]));
    // Each answered request charged exactly what its answer's usage costs (no shortfall at $100).
    const wronglyCharged = answered.filter((answer) => chargedById.get(answer.requestId) !== answer.cost);
    expect(wronglyCharged).toEqual([]);
    // Billed beyond the 200s: only requests whose client got an error (a recording whose reply was lost).
    const answeredIds = new Set(answered.map((answer) => answer.requestId));
    const failedIds = new Set(answers.filter((answer) => answer.status !== 200).map((answer) => answer.requestId));
    expect(records.filter((r) => !answeredIds.has(r.request_id) && !failedIds.has(r.request_id))).toEqual([]);
    // And the balance moved by exactly those charges, each once.
    const answeredCost = answered.reduce((sum, answer) => sum + answer.cost, 0n);
    const lostReplies = records.filter((r) => failedIds.has(r.request_id));
    const charged = answeredCost + lostReplies.reduce((sum, r) => sum + BigInt(r.charged), 0n);
    expect(formatUsd(await books.balance(customer))).toBe(formatUsd(before - charged));
  }, 120_000);

  it('should reload balances from Postgres when Redis comes back from an older copy', async () => {
    const customer = await gateway.newCustomer({ balance: '1' });
    const first = await gateway.chat(customer.key, { model, messages: userMessages() });
    expect(first.status).toBe(200);
    const settled = usd('1') - costOf(prices, wireUsageOf(first.body.usage));
    expect(await books.waitForBalance(customer, settled)).toBe(settled);
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    // A copy of Redis now, while its snapshot holds this balance.
    const direct = new Redis(redis.url);
    await direct.save();
    await direct.quit();
    const copy = mkdtempSync(join(tmpdir(), 'gw-redis-old-'));
    copyFileSync(join(redis.dir, 'dump.rdb'), join(copy, 'dump.rdb'));

    // Spent down to a millionth of a dollar since the copy (an operator's debit; any charge would do).
    const debit = settled - usd('0.000001');
    const debited = await gateway.admin('POST', `/admin/accounts/${customer.accountId}/adjustments`, {
      amount: `-${formatUsd(debit)}`,
      reason: 'spent',
    });
    expect(debited.status).toBe(201);
    expectApiError(await gateway.chat(customer.key, { model, messages: userMessages() }), 403, {
      code: 'insufficient_balance',
    });

    // Only the API's admissions matter here (a worker is restarted after such a restore).
    await worker.close();
    try {
      await redis.kill();
      await redis.restart(copy, ['--appendonly', 'no']);
      const sentUpstream = gateway.mock.requests.length;

      const afterRestore = await waitForAdmissions(customer);

      // The restored snapshot said $0.99…; Postgres says $0.000001.
      expectApiError(afterRestore, 403, { code: 'insufficient_balance' });
      expect(gateway.mock.requests.length).toBe(sentUpstream);
      expect(await books.balance(customer)).toBe(usd('0.000001'));
    } finally {
      worker = await TestWorker.start({ REDIS_URL: throughProxy(redis.url, proxy) });
      rmSync(copy, { recursive: true, force: true });
    }
  }, 60_000);
});
