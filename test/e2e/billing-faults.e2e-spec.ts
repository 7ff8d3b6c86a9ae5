import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { formatUsd } from 'src/common/money/money';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { BillingProcessor } from 'src/modules/billing/billing.processor';
import { BillingQueue } from 'src/modules/billing/billing.queue';
import { HoldSweeperService } from 'src/modules/billing/hold-sweeper.service';
import { Prices, usageCost } from 'src/modules/billing/pricing';
import { SettlementBatchService } from 'src/modules/billing/settlement-batch.service';
import { SettlementService } from 'src/modules/billing/settlement.service';
import { estimatePromptTokens } from 'src/modules/billing/token-estimator';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import {
  Books,
  costOf,
  eventually,
  expectApiError,
  mockUsage,
  pricesOf,
  requestIdOf,
  sleep,
  usd,
  userMessages,
  wireUsageOf,
  BillingWorld,
  openBillingWorld,
} from 'test/e2e/billing-helpers';
import { Customer, HttpResult, parseEventStream, TestGateway, TestWorker } from 'test/support/gateway';

/** Holds made outside a request: through a key without a spend limit. */
const NO_LIMIT = { id: '00000000-0000-4000-8000-000000000000', spendLimit: null };

const INPUT_PRICE = '2.5';
const OUTPUT_PRICE = '10';
const MAX_OUTPUT = 1000;

describe('billing: failures, admission and settlement faults', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;
  let unreachableModel: string;
  let prices: Prices;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE, { maxOutputTokens: MAX_OUTPUT });
    ({ gateway, worker, books, prices, model } = world);
    // Nothing listens on port 1: connections are refused at once.
    unreachableModel = await gateway.addModel({
      inputPrice: INPUT_PRICE,
      outputPrice: OUTPUT_PRICE,
      baseUrl: 'http://127.0.0.1:1/v1',
    });
  });
  afterEach(() => books.expectBalanced());
  afterAll(() => world.close());

  /** The worst-case hold of a request with these messages and output budget. */
  const holdOf = (messages: unknown[], maxTokens = MAX_OUTPUT, n = 1, at: Prices = prices) =>
    usageCost(at, estimatePromptTokens(messages), maxTokens * n);

  /** What an API process records for a completed request, as a worker receives it. */
  function payloadFor(customer: Customer, overrides: Partial<SettleCompletionPayload> = {}): SettleCompletionPayload {
    return {
      requestId: `req_${randomUUID().replace(/-/g, '')}`,
      accountId: customer.accountId,
      keyId: customer.keyId,
      modelId: model,
      channelId: 'ch-direct',
      inputPrice: prices.inputPrice.toString(),
      outputPrice: prices.outputPrice.toString(),
      promptTokens: 1234,
      completionTokens: 567,
      usageSource: 'upstream',
      status: 'completed',
      upstreamLatencyMs: 12,
      createdAt: new Date().toISOString(),
      ...overrides,
    };
  }
  const payloadCost = (payload: SettleCompletionPayload) =>
    costOf(prices, { promptTokens: payload.promptTokens, completionTokens: payload.completionTokens });

  /**
   * After a request that must cost nothing: one successful request settles, and it is the only bill,
   * so the failed one was never recorded (a late settlement of it cannot land after this check).
   */
  async function expectOnlySentinelBilled(customer: Customer, before: bigint, failedIds: string[]): Promise<void> {
    for (const id of failedIds) {
      expect(await books.recordedUsage(customer.accountId, id)).toBeNull();
    }
    const messages = userMessages('sentinel');
    const sentinel = await gateway.chat(customer.key, { model, messages });
    expect(sentinel.status).toBe(200);
    const cost = costOf(prices, wireUsageOf(sentinel.body.usage));
    expect(formatUsd(await books.waitForBalance(customer, before - cost))).toBe(formatUsd(before - cost));
    expect((await books.bills(customer)).map((bill) => bill.requestId)).toEqual([requestIdOf(sentinel)]);
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    expect(await books.usageRecords(failedIds)).toEqual([]);
  }

  describe('failures cost nothing', () => {
    const messages = userMessages('This request fails');
    const cases: [string, () => { model?: string; body: Record<string, unknown> }, number, Record<string, unknown>][] =
      [
        ['a bad temperature (400)', () => ({ body: { temperature: 5 } }), 400, { param: 'temperature', code: null }],
        ['an upstream 500', () => ({ body: { mock: { status: 500 } } }), 500, { type: 'server_error', code: null }],
        [
          'an upstream 500 on a stream',
          () => ({ body: { stream: true, mock: { status: 500 } } }),
          500,
          { type: 'server_error', code: null },
        ],
        ['an upstream 400', () => ({ body: { mock: { status: 400 } } }), 400, { code: null }],
        [
          'an unreachable channel (502)',
          () => ({ model: unreachableModel, body: {} }),
          502,
          { type: 'server_error', code: 'upstream_unreachable' },
        ],
        [
          'an abnormal upstream answer',
          () => ({ body: { mock: { garbage: true } } }),
          500,
          { type: 'server_error', code: null },
        ],
        [
          'an abnormal upstream stream',
          () => ({ body: { stream: true, mock: { garbage: true } } }),
          500,
          { type: 'server_error', code: null },
        ],
      ];

    it.each(cases)(
      'should bill nothing and release the hold at once for %s',
      async (_label, request, status, error: Record<string, any>) => {
        const customer = await gateway.newCustomer({ balance: '10' });
        const before = await books.balance(customer);
        const { model: target = model, body } = request();

        const response = await gateway.chat(customer.key, { model: target, messages, ...body });

        expectApiError(response, status, error);
        // The hold goes back before the error is answered.
        expect(await books.reserved(customer.accountId)).toBe(0n);
        expect(await books.balance(customer)).toBe(before);
        await expectOnlySentinelBilled(customer, before, [requestIdOf(response)]);
      },
    );

    it('should bill nothing for a disabled key (403)', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const created = await gateway.call('POST', '/console/keys', { token: customer.token, body: { name: 'off' } });
      const disabled = await gateway.call('PATCH', `/console/keys/${created.body.id}`, {
        token: customer.token,
        body: { status: 'disabled' },
      });
      expect(disabled.status).toBe(200);
      const sentUpstream = gateway.mock.requests.length;

      const response = await gateway.chat(created.body.key, { model, messages });

      expectApiError(response, 403, { code: 'api_key_disabled' });
      expect(gateway.mock.requests.length).toBe(sentUpstream);
      expect(await books.reserved(customer.accountId)).toBe(0n);
      await expectOnlySentinelBilled(customer, before, [requestIdOf(response)]);
    });

    it.each([
      ['non-streaming', {}],
      ['streaming', { stream: true }],
    ])(
      'should bill nothing when the client hangs up before the first byte (%s)',
      async (_label, extra: Record<string, unknown>) => {
        const customer = await gateway.newCustomer({ balance: '10' });
        const before = await books.balance(customer);
        const controller = new AbortController();
        const pending = fetch(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages, mock: { latency_ms: 1500 }, ...extra }),
          signal: controller.signal,
        });
        await eventually(
          () => books.reserved(customer.accountId),
          (reserved) => reserved > 0n,
        );
        controller.abort();
        await expect(pending).rejects.toThrow();

        expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
        // Past the upstream's answer time: the gateway had its chance to (wrongly) record something.
        await sleep(1700);
        expect(await books.usageRecordsOf(customer.accountId)).toEqual([]);
        expect(await books.balance(customer)).toBe(before);
        await expectOnlySentinelBilled(customer, before, []);
      },
    );

    it('should bill nothing when the upstream breaks off before delivering a single token', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);

      const response = await gateway.chat(customer.key, { model, messages, stream: true, mock: { break_after: 0 } });

      expect(response.status).toBe(200);
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(false);
      expect(chunks.flatMap((chunk) => chunk.choices ?? []).map((choice: any) => choice.delta.content)).toEqual(['']);
      expect(chunks.at(-1)).toEqual({ error: expect.objectContaining({ type: 'server_error' }) });
      await expectOnlySentinelBilled(customer, before, [requestIdOf(response)]);
    });
  });

  describe('admission (the worst-case hold)', () => {
    it('should refuse an account with no balance without calling the upstream, until it is credited', async () => {
      const customer = await gateway.newCustomer({ balance: '0' });
      const sentUpstream = gateway.mock.requests.length;

      const refused = await gateway.chat(customer.key, { model, messages: userMessages() });

      expectApiError(refused, 403, { code: 'insufficient_balance' });
      expect(gateway.mock.requests.length).toBe(sentUpstream);
      expect(await books.reserved(customer.accountId)).toBe(0n);
      expect(await books.bills(customer)).toEqual([]);

      const credited = await gateway.admin('POST', `/admin/accounts/${customer.accountId}/adjustments`, {
        amount: '1',
        reason: 'top-up',
      });
      expect(credited.status).toBe(201);
      const admitted = await gateway.chat(customer.key, { model, messages: userMessages() });
      expect(admitted.status).toBe(200);
      const cost = costOf(prices, wireUsageOf(admitted.body.usage));
      expect(await books.waitForBalance(customer, usd('1') - cost)).toBe(usd('1') - cost);
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    });

    it('should refuse a request whose worst case the balance cannot cover, and admit it with a lower max_tokens', async () => {
      const expensive = pricesOf('1', '1000');
      const expensiveModel = await gateway.addModel({ inputPrice: '1', outputPrice: '1000', maxOutputTokens: 4000 });
      const messages = userMessages('Write me an essay about the sea');
      // Exactly the worst case of max_tokens 50: it covers the prompt many times over, but not one token more.
      const balance = holdOf(messages, 50, 1, expensive);
      expect(balance).toBeGreaterThan(100n * usageCost(expensive, estimatePromptTokens(messages), 0));
      const customer = await gateway.newCustomer({ balance: formatUsd(balance) });
      const sentUpstream = gateway.mock.requests.length;

      const refusals = [
        await gateway.chat(customer.key, { model: expensiveModel, messages }),
        await gateway.chat(customer.key, { model: expensiveModel, messages, max_tokens: 1000 }),
        await gateway.chat(customer.key, { model: expensiveModel, messages, max_tokens: 51 }),
        await gateway.chat(customer.key, { model: expensiveModel, messages, max_tokens: 50, n: 2 }),
        await gateway.chat(customer.key, { model: expensiveModel, messages, max_tokens: 51, stream: true }),
      ];

      for (const refused of refusals) {
        expectApiError(refused, 403, { code: 'insufficient_balance' });
      }
      expect(gateway.mock.requests.length).toBe(sentUpstream);
      expect(await books.reserved(customer.accountId)).toBe(0n);

      const admitted = await gateway.chat(customer.key, { model: expensiveModel, messages, max_tokens: 50 });

      expect(admitted.status).toBe(200);
      const usage = wireUsageOf(admitted.body.usage);
      expect(usage).toEqual(mockUsage(messages));
      const cost = costOf(expensive, usage);
      expect(formatUsd(await books.waitForBalance(customer, balance - cost))).toBe(formatUsd(balance - cost));
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    });

    it('should size the hold by max_completion_tokens when that is the limit given', async () => {
      const expensive = pricesOf('1', '1000');
      const expensiveModel = await gateway.addModel({ inputPrice: '1', outputPrice: '1000', maxOutputTokens: 4000 });
      const messages = userMessages('Mind the newer limit parameter');
      const balance = holdOf(messages, 40, 1, expensive);
      const customer = await gateway.newCustomer({ balance: formatUsd(balance) });

      const refused = await gateway.chat(customer.key, { model: expensiveModel, messages, max_completion_tokens: 41 });
      const admitted = await gateway.chat(customer.key, { model: expensiveModel, messages, max_completion_tokens: 40 });

      expectApiError(refused, 403, { code: 'insufficient_balance' });
      expect(admitted.status).toBe(200);
      const cost = costOf(expensive, wireUsageOf(admitted.body.usage));
      expect(formatUsd(await books.waitForBalance(customer, balance - cost))).toBe(formatUsd(balance - cost));
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    });
  });

  describe('settlement: idempotent, and isolating a bad job', () => {
    it('should charge once when the same payload is settled again, concurrently, or by two workers', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const settlement = worker.app.get(SettlementService);
      const twice = payloadFor(customer);
      const together = payloadFor(customer, { completionTokens: 89 });
      const racing = payloadFor(customer, { promptTokens: 77 });
      const other = await TestWorker.start();

      try {
        await settlement.settle([twice]);
        await settlement.settle([twice]);
        await Promise.all([
          settlement.settle([together]),
          settlement.settle([together]),
          settlement.settle([together]),
        ]);
        await settlement.settle([together, together]);
        await Promise.all([settlement.settle([racing]), other.app.get(SettlementService).settle([racing])]);
      } finally {
        await other.close();
      }

      const costs = [twice, together, racing].map(payloadCost);
      const expected = costs.reduce((balance, cost) => balance - cost, before);
      expect(formatUsd(await books.balance(customer))).toBe(formatUsd(expected));
      const ids = [twice, together, racing].map((payload) => payload.requestId);
      expect((await books.usageRecords(ids)).map((record) => record.request_id)).toEqual([...ids].sort());
      expect((await books.ledgerByReference(ids)).map((entry) => entry.kind)).toEqual(['usage', 'usage', 'usage']);
      expect((await books.bills(customer)).map((bill) => bill.requestId).sort()).toEqual([...ids].sort());
    });

    it('should charge once when a completed request is recorded or settled again', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const consumer = worker.app.get(BillingProcessor).worker;
      await consumer.pause();
      let recorded: SettleCompletionPayload | null;
      let response: HttpResult;
      try {
        response = await gateway.chat(customer.key, { model, messages: userMessages('Once only') });
        expect(response.status).toBe(200);
        recorded = await books.recordedUsage(customer.accountId, requestIdOf(response));
        expect(recorded).toEqual(expect.objectContaining({ requestId: requestIdOf(response), status: 'completed' }));
      } finally {
        consumer.resume();
      }
      const cost = costOf(prices, wireUsageOf(response.body.usage));
      expect(formatUsd(await books.waitForBalance(customer, before - cost))).toBe(formatUsd(before - cost));
      expect(await books.waitForSettled(customer.accountId, requestIdOf(response))).toBeNull();
      const fresh = payloadFor(customer);

      // A replayed recording (an API retrying its write), a duplicate one, and a direct settlement.
      const usage = gateway.app.get(UsageQueueService);
      const producer = gateway.app.get(BillingQueue);
      await usage.recordUsage(customer.accountId, recorded!.requestId, JSON.stringify(recorded));
      await usage.recordUsage(customer.accountId, fresh.requestId, JSON.stringify(fresh));
      await usage.recordUsage(customer.accountId, fresh.requestId, JSON.stringify(fresh));
      await producer.enqueueSettlement();
      await producer.enqueueSettlement();
      await worker.app.get(SettlementService).settle([recorded!]);

      const expected = before - cost - payloadCost(fresh);
      expect(formatUsd(await books.waitForBalance(customer, expected))).toBe(formatUsd(expected));
      await sleep(300);
      expect(await books.balance(customer)).toBe(expected);
      expect(await books.bills(customer)).toHaveLength(2);
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
      expect(await books.waitForSettled(customer.accountId, fresh.requestId)).toBeNull();
    });

    it('should settle the good payloads of a batch that also holds one that cannot be stored', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const settlement = worker.app.get(SettlementService);
      const good = [payloadFor(customer), payloadFor(customer, { completionTokens: 3 })];
      const poison = payloadFor(customer, { keyId: 'not-a-uuid' });

      // One batch (one transaction) at first, then one by one.
      const report = await settlement.settle([good[0], poison, good[1]]);

      expect(report).toEqual({
        settled: good.map((payload) => payload.requestId),
        failed: [poison.requestId],
        unavailable: [],
      });
      const expected = before - payloadCost(good[0]) - payloadCost(good[1]);
      expect(formatUsd(await books.balance(customer))).toBe(formatUsd(expected));
      expect(await books.usageRecords([poison.requestId])).toEqual([]);
      expect(await books.ledgerByReference([poison.requestId])).toEqual([]);
      expect((await books.bills(customer)).map((bill) => bill.requestId).sort()).toEqual(
        good.map((payload) => payload.requestId).sort(),
      );
    });

    it('should let one claimer at a time have a recorded usage, until its lease lapses', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const usage = gateway.app.get(UsageQueueService);
      const consumer = worker.app.get(BillingProcessor).worker;
      const payload = payloadFor(customer);
      await consumer.pause();
      try {
        await usage.recordUsage(customer.accountId, payload.requestId, JSON.stringify(payload));

        // Only this test's payload counts: anything else recorded meanwhile is leased briefly too.
        const own = (claimed: string[]) =>
          claimed
            .map((json) => JSON.parse(json) as SettleCompletionPayload)
            .filter((p) => p.requestId === payload.requestId);
        const first = own(await usage.claimUsage(500, 1_000));
        const second = own(await usage.claimUsage(500, 1_000));
        await sleep(1_100);
        const afterLease = own(await usage.claimUsage(500, 1_000));

        expect(first).toEqual([payload]);
        expect(second).toEqual([]);
        expect(afterLease).toEqual([payload]);
        expect(await usage.isClaimed(customer.accountId, payload.requestId)).toBe(true);
      } finally {
        consumer.resume();
      }
      // Settling it (as the claimer does) ends it: nothing is left to claim, ever.
      await worker.app.get(SettlementService).settle([payload]);
      expect(await books.recordedUsage(customer.accountId, payload.requestId)).toBeNull();
      expect(await usage.isClaimed(customer.accountId, payload.requestId)).toBe(false);
    });

    it('should not give a hold back once usage is recorded for it (a recording whose reply was lost)', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const gate = gateway.app.get(BalanceGateService);
      const usage = gateway.app.get(UsageQueueService);
      const payload = payloadFor(customer);
      const consumer = worker.app.get(BillingProcessor).worker;
      await consumer.pause();
      try {
        expect(await gate.hold(customer.accountId, payload.requestId, 5_000_000n, NO_LIMIT)).toEqual({
          outcome: 'held',
        });
        await usage.recordUsage(customer.accountId, payload.requestId, JSON.stringify(payload));

        expect(await usage.release(customer.accountId, payload.requestId)).toBe(false);
        expect(await books.reserved(customer.accountId)).toBe(5_000_000n);
        expect(await books.recordedUsage(customer.accountId, payload.requestId)).toEqual(payload);
      } finally {
        consumer.resume();
      }
      await gateway.app.get(BillingQueue).enqueueSettlement();
      const expected = before - payloadCost(payload);
      expect(formatUsd(await books.waitForBalance(customer, expected))).toBe(formatUsd(expected));
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    });

    it('should settle usage recorded by an API process that died before asking for settlement', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const payload = payloadFor(customer);

      // Recorded, and no settlement job ever enqueued: the worker's periodic pass finds it.
      await gateway.app
        .get(UsageQueueService)
        .recordUsage(customer.accountId, payload.requestId, JSON.stringify(payload));

      const expected = before - payloadCost(payload);
      expect(formatUsd(await books.waitForBalance(customer, expected, 15_000))).toBe(formatUsd(expected));
      expect(await books.waitForSettled(customer.accountId, payload.requestId)).toBeNull();
    }, 20_000);

    it('should resolve and charge nothing for a payload of an unknown account', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const stranger = payloadFor(customer, { accountId: randomUUID() });

      await expect(worker.app.get(SettlementService).settle([stranger])).resolves.toEqual({
        settled: [stranger.requestId],
        failed: [],
        unavailable: [],
      });

      expect(await books.usageRecords([stranger.requestId])).toEqual([]);
      expect(await books.ledgerByReference([stranger.requestId])).toEqual([]);
      expect(await books.balance(customer)).toBe(before);
    });

    it('should settle the other accounts of a batch while one account row stays locked, and that one after', async () => {
      const [locked, free] = await Promise.all([
        gateway.newCustomer({ balance: '10' }),
        gateway.newCustomer({ balance: '10' }),
      ]);
      const [lockedBefore, freeBefore] = await Promise.all([books.balance(locked), books.balance(free)]);
      const waiting = [payloadFor(locked), payloadFor(locked, { completionTokens: 9 })];
      const other = payloadFor(free);
      // A 2 s lease: a settlement waits at most 200 ms for a row lock.
      const shortLease = await TestWorker.start({ SETTLEMENT_LEASE_MS: '2000' });
      const operator = new Client({ connectionString: process.env.DATABASE_URL });
      await operator.connect();
      try {
        await operator.query('BEGIN');
        await operator.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [locked.accountId]);

        // Returns while the lock is still held: nothing waits for the operator's transaction.
        const transactions = jest.spyOn(shortLease.app.get(SettlementBatchService), 'settle');
        const report = await shortLease.app.get(SettlementService).settle([waiting[0], other, waiting[1]]);
        // The batch, then each account once: the locked one is not retried payload by payload.
        expect(transactions).toHaveBeenCalledTimes(3);

        expect(report.settled).toEqual([other.requestId]);
        expect([...report.failed].sort()).toEqual(waiting.map((payload) => payload.requestId).sort());
        expect(await books.balance(free)).toBe(freeBefore - payloadCost(other));
        expect(await books.balance(locked)).toBe(lockedBefore);
        await operator.query('COMMIT');

        const retried = await shortLease.app.get(SettlementService).settle(waiting);

        expect([...retried.settled].sort()).toEqual(waiting.map((payload) => payload.requestId).sort());
        const expected = lockedBefore - payloadCost(waiting[0]) - payloadCost(waiting[1]);
        expect(formatUsd(await books.balance(locked))).toBe(formatUsd(expected));
      } finally {
        await operator.end();
        await shortLease.close();
      }
    });
  });

  describe('a worker that is down', () => {
    it('should keep the usage recorded while it is down and settle each exactly once when one starts', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Queued while the worker sleeps');
      await worker.close();
      let responses: HttpResult[] = [];
      try {
        for (const extra of [{}, {}, { stream: true }, { n: 2 }, { stream: true, max_tokens: 20 }]) {
          responses.push(await gateway.chat(customer.key, { model, messages, ...extra }));
        }
        expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
        const holds = holdOf(messages) * 3n + holdOf(messages, MAX_OUTPUT, 2) + holdOf(messages, 20);
        await sleep(500);
        expect(await books.balance(customer)).toBe(before);
        expect(await books.bills(customer)).toEqual([]);
        expect(await books.reserved(customer.accountId)).toBe(holds);
        for (const response of responses) {
          expect(await books.recordedUsage(customer.accountId, requestIdOf(response))).not.toBeNull();
        }
      } finally {
        worker = world.worker = await TestWorker.start();
      }

      responses = responses.filter((response) => response.status === 200);
      const n = [1, 1, 1, 2, 1];
      const costs = responses.map((_, index) => costOf(prices, mockUsage(messages, undefined, n[index])));
      const expected = costs.reduce((balance, cost) => balance - cost, before);
      expect(formatUsd(await books.waitForBalance(customer, expected))).toBe(formatUsd(expected));
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
      const bills = await books.bills(customer);
      expect(bills.map((bill) => bill.requestId).sort()).toEqual(responses.map(requestIdOf).sort());
    });
  });

  describe('the hold sweeper', () => {
    it('should release an orphaned hold but keep the hold of a request whose usage is recorded and not settled yet', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Sweep around me');
      const gate = gateway.app.get(BalanceGateService);
      const consumer = worker.app.get(BillingProcessor).worker;
      await consumer.pause();
      let response: HttpResult;
      try {
        response = await gateway.chat(customer.key, { model, messages });
        expect(response.status).toBe(200);
        const queuedHold = holdOf(messages);
        expect(await books.reserved(customer.accountId)).toBe(queuedHold);
        expect(await gate.hold(customer.accountId, 'req_orphan', 123n, NO_LIMIT)).toEqual({ outcome: 'held' });
        expect(await books.reserved(customer.accountId)).toBe(queuedHold + 123n);
        await sleep(5);

        const released = await worker.app.get(HoldSweeperService).sweep(0);

        expect(released).toBeGreaterThanOrEqual(1);
        expect(await books.reserved(customer.accountId)).toBe(queuedHold);
        expect(await books.balance(customer)).toBe(before);
      } finally {
        consumer.resume();
      }
      const cost = costOf(prices, wireUsageOf(response.body.usage));
      expect(formatUsd(await books.waitForBalance(customer, before - cost))).toBe(formatUsd(before - cost));
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
      expect(await books.bills(customer)).toHaveLength(1);
    });

    it("should not sweep a live request's hold when the API's clock runs behind the worker's", async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const messages = userMessages('Slow, on a process whose clock is late');
      // The API process's clock is 40 minutes behind while it admits the request (past the sweeper's 30).
      const realNow = Date.now.bind(Date);
      const lateClock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() - 40 * 60_000);
      const pending = gateway.chat(customer.key, { model, messages, mock: { latency_ms: 1_500 } });
      try {
        await eventually(
          () => books.reserved(customer.accountId),
          (reserved) => reserved > 0n,
        );
      } finally {
        lateClock.mockRestore();
      }

      // The worker's sweep, with its own (right) clock and the default age, while the request runs.
      await worker.app.get(HoldSweeperService).sweep();

      expect(await books.reserved(customer.accountId)).toBe(holdOf(messages));
      const response = await pending;
      expect(response.status).toBe(200);
      const before = usd('10');
      const cost = costOf(prices, wireUsageOf(response.body.usage));
      expect(formatUsd(await books.waitForBalance(customer, before - cost))).toBe(formatUsd(before - cost));
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    });

    it('should still find an orphaned hold behind a thousand holds whose usage waits for settlement', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const gate = gateway.app.get(BalanceGateService);
      const usage = gateway.app.get(UsageQueueService);
      const consumer = worker.app.get(BillingProcessor).worker;
      const recordedIds = Array.from({ length: 1_001 }, () => `req_${randomUUID().replace(/-/g, '')}`);
      await consumer.pause();
      try {
        await Promise.all(
          recordedIds.map(async (requestId) => {
            await gate.hold(customer.accountId, requestId, 1n, NO_LIMIT);
            const payload = payloadFor(customer, { requestId, promptTokens: 1, completionTokens: 1 });
            await usage.recordUsage(customer.accountId, requestId, JSON.stringify(payload));
          }),
        );
        await sleep(5);
        expect(await gate.hold(customer.accountId, 'req_orphan_behind', 7n, NO_LIMIT)).toEqual({ outcome: 'held' });
        await sleep(5);

        const released = await worker.app.get(HoldSweeperService).sweep(1);

        expect(released).toBeGreaterThanOrEqual(1);
        expect(await books.reserved(customer.accountId)).toBe(1_001n);
      } finally {
        consumer.resume();
      }
      await gateway.app.get(BillingQueue).enqueueSettlement();
      expect(await books.waitForNoHolds(customer.accountId, 20_000)).toBe(0n);
    }, 30_000);
  });
});
