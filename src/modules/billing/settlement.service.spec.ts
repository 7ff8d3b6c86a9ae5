import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { SettlementBatchService, SettlementResult } from 'src/modules/billing/settlement-batch.service';
import { SettlementService } from 'src/modules/billing/settlement.service';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { BalanceGateService, BalanceSnapshot } from 'src/modules/ledger/balance-gate.service';
import { settlePayload } from 'test/support/settle-payload';
import { newTestService, TestService } from 'test/support/test-service';

const LEASE_MS = 60_000;

const unavailable = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const lockTimeout = () => Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' });
const badValue = () => Object.assign(new Error('invalid input syntax for type uuid'), { code: '22P02' });

const payload = (accountId: string) => settlePayload(accountId);

const ids = (payloads: SettleCompletionPayload[]) => payloads.map((p) => p.requestId);

/** What the batch transaction returns when it settles all of `payloads`. */
function settled(
  payloads: SettleCompletionPayload[],
  snapshots = new Map<string, BalanceSnapshot>(),
): SettlementResult {
  return { applied: ids(payloads), unknownAccounts: [], shortfalls: [], snapshots, keySpent: new Map() };
}

describe(SettlementService.name, () => {
  let test: TestService<SettlementService>;
  let sut: SettlementService;
  let batch: jest.Mocked<SettlementBatchService>;
  let usage: jest.Mocked<UsageQueueService>;
  let gate: jest.Mocked<BalanceGateService>;

  beforeEach(async () => {
    test = await newTestService(SettlementService, { settlementLeaseMs: LEASE_MS });
    sut = test.sut;
    batch = test.mock(SettlementBatchService);
    usage = test.mock(UsageQueueService);
    gate = test.mock(BalanceGateService);
    batch.settle.mockImplementation((payloads) => Promise.resolve(settled(payloads)));
  });

  /** The batch transaction fails whenever it holds one of `poisoned`, with `error()`. */
  function failWhenHolding(poisoned: SettleCompletionPayload[], error: () => Error) {
    const poisonedIds = new Set(ids(poisoned));
    batch.settle.mockImplementation((payloads) =>
      payloads.some((p) => poisonedIds.has(p.requestId)) ? Promise.reject(error()) : Promise.resolve(settled(payloads)),
    );
  }

  describe('settle', () => {
    it('should settle nothing, and open no transaction, for no payloads', async () => {
      await expect(sut.settle([])).resolves.toEqual({ settled: [], failed: [], unavailable: [] });
      expect(batch.settle).not.toHaveBeenCalled();
    });

    it('should settle a batch in one transaction, then close its holds with the new balances', async () => {
      const payloads = [payload('a'), payload('b'), payload('a')];
      const snapshots = new Map([
        ['a', { balance: 70n, version: 3n }],
        ['b', { balance: 5n, version: 9n }],
      ]);
      batch.settle.mockResolvedValue(settled(payloads, snapshots));

      await expect(sut.settle(payloads)).resolves.toEqual({ settled: ids(payloads), failed: [], unavailable: [] });

      expect(batch.settle).toHaveBeenCalledTimes(1);
      expect(usage.releaseMany).toHaveBeenCalledWith(
        payloads.map(({ accountId, requestId }) => ({ accountId, requestId, snapshot: snapshots.get(accountId) })),
      );
      expect(gate.sync).not.toHaveBeenCalled();
    });

    it('should push the balance of a referrer credited by the batch, which has no hold of its own', async () => {
      const payloads = [payload('invitee')];
      const referrer = { balance: 1_000n, version: 12n };
      batch.settle.mockResolvedValue(
        settled(
          payloads,
          new Map([
            ['invitee', { balance: 1n, version: 2n }],
            ['referrer', referrer],
          ]),
        ),
      );

      await sut.settle(payloads);

      expect(gate.sync).toHaveBeenCalledTimes(1);
      expect(gate.sync).toHaveBeenCalledWith('referrer', referrer);
    });

    it('should log unknown accounts and shortfalls, and count them settled', async () => {
      const [stranger, short] = [payload('nobody'), payload('a')];
      batch.settle.mockResolvedValue({
        applied: [short.requestId],
        unknownAccounts: [stranger.requestId],
        shortfalls: [{ requestId: short.requestId, accountId: 'a', missing: 42n }],
        snapshots: new Map(),
        keySpent: new Map(),
      });

      await expect(sut.settle([stranger, short])).resolves.toEqual({
        settled: ids([stranger, short]),
        failed: [],
        unavailable: [],
      });

      expect(test.logger.error).toHaveBeenCalledWith(
        { reqId: stranger.requestId },
        'settlement for an unknown account: nothing charged',
      );
      expect(test.logger.error).toHaveBeenCalledWith(
        { reqId: short.requestId, accountId: 'a', missingNanos: '42' },
        'balance could not cover the full charge; charged what was left',
      );
    });

    it('should fail the whole batch at once, without splitting it, while the database is unavailable', async () => {
      const payloads = [payload('a'), payload('b'), payload('b')];
      batch.settle.mockRejectedValue(unavailable());

      await expect(sut.settle(payloads)).resolves.toEqual({
        settled: [],
        failed: ids(payloads),
        unavailable: ids(payloads),
      });

      expect(batch.settle).toHaveBeenCalledTimes(1);
      expect(usage.releaseMany).not.toHaveBeenCalled();
    });

    it('should fail a lone payload that cannot be stored, not counting it as an outage', async () => {
      const poison = payload('a');
      batch.settle.mockRejectedValue(badValue());

      await expect(sut.settle([poison])).resolves.toEqual({ settled: [], failed: [poison.requestId], unavailable: [] });
      expect(batch.settle).toHaveBeenCalledTimes(1);
    });

    it('should settle a failed batch account by account, so that a broken account fails alone', async () => {
      const [a1, b1, a2, c1] = [payload('a'), payload('b'), payload('a'), payload('c')];
      failWhenHolding([b1], badValue);

      await expect(sut.settle([a1, b1, a2, c1])).resolves.toEqual({
        settled: ids([a1, a2, c1]),
        failed: [b1.requestId],
        unavailable: [],
      });

      expect(batch.settle.mock.calls.map(([payloads]) => ids(payloads))).toEqual([
        ids([a1, b1, a2, c1]),
        ids([a1, a2]),
        ids([b1]),
        ids([c1]),
      ]);
    });

    it('should settle at most 8 accounts of a failed batch at once', async () => {
      const payloads = Array.from({ length: 20 }, (_, index) => payload(`account-${index}`));
      let running = 0;
      let most = 0;
      batch.settle.mockImplementation(async (group) => {
        if (group.length > 1) {
          throw badValue();
        }
        most = Math.max(most, ++running);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        return settled(group);
      });

      await expect(sut.settle(payloads)).resolves.toEqual({ settled: ids(payloads), failed: [], unavailable: [] });

      expect(most).toBe(8);
      expect(batch.settle).toHaveBeenCalledTimes(21);
    });

    it('should not retry an account payload by payload when its row stayed locked', async () => {
      const [locked1, free, locked2] = [payload('locked'), payload('free'), payload('locked')];
      failWhenHolding([locked1, locked2], lockTimeout);

      await expect(sut.settle([locked1, free, locked2])).resolves.toEqual({
        settled: [free.requestId],
        failed: ids([locked1, locked2]),
        unavailable: [],
      });

      // The batch, then each account once.
      expect(batch.settle).toHaveBeenCalledTimes(3);
    });

    it('should settle one account payload by payload after its transaction failed, so one bad payload fails alone', async () => {
      const payloads = [payload('a'), payload('a'), payload('a')];
      failWhenHolding([payloads[1]], badValue);

      await expect(sut.settle(payloads)).resolves.toEqual({
        settled: ids([payloads[0], payloads[2]]),
        failed: [payloads[1].requestId],
        unavailable: [],
      });

      expect(batch.settle.mock.calls.map(([group]) => ids(group))).toEqual([
        ids(payloads),
        [payloads[0].requestId],
        [payloads[1].requestId],
        [payloads[2].requestId],
      ]);
    });

    it('should count as unavailable the accounts whose own transaction found the database down', async () => {
      const [a, b] = [payload('a'), payload('b')];
      batch.settle
        .mockRejectedValueOnce(badValue())
        .mockResolvedValueOnce(settled([a]))
        .mockRejectedValueOnce(unavailable());

      await expect(sut.settle([a, b])).resolves.toEqual({
        settled: [a.requestId],
        failed: [b.requestId],
        unavailable: [b.requestId],
      });
    });
  });

  describe('settleRecorded', () => {
    const claim = (payloads: SettleCompletionPayload[]) => payloads.map((p) => JSON.stringify(p));

    it('should claim under the lease and end the pass at a short batch', async () => {
      const payloads = [payload('a'), payload('b')];
      usage.claimUsage.mockResolvedValueOnce(claim(payloads));

      await expect(sut.settleRecorded()).resolves.toEqual({ settled: 2, retryInMs: null });

      expect(usage.claimUsage).toHaveBeenCalledTimes(1);
      expect(usage.claimUsage).toHaveBeenCalledWith(500, LEASE_MS);
      expect(batch.settle).toHaveBeenCalledWith(payloads);
      expect(usage.retryLater).not.toHaveBeenCalled();
    });

    it('should claim again while full batches settle cleanly', async () => {
      const full = Array.from({ length: 500 }, () => payload('a'));
      usage.claimUsage.mockResolvedValueOnce(claim(full)).mockResolvedValueOnce(claim([payload('a')]));

      await expect(sut.settleRecorded()).resolves.toEqual({ settled: 501, retryInMs: null });
      expect(usage.claimUsage).toHaveBeenCalledTimes(2);
    });

    it('should give failed usage back with a backoff, flagging an outage, and end the pass', async () => {
      const full = Array.from({ length: 500 }, (_, index) => payload(`account-${index % 3}`));
      usage.claimUsage.mockResolvedValueOnce(claim(full));
      batch.settle.mockRejectedValue(unavailable());
      usage.retryLater.mockResolvedValue(750);

      await expect(sut.settleRecorded()).resolves.toEqual({ settled: 0, retryInMs: 750 });

      expect(usage.claimUsage).toHaveBeenCalledTimes(1);
      expect(usage.retryLater).toHaveBeenCalledWith(
        full.map(({ accountId, requestId }) => ({ accountId, requestId, databaseUnavailable: true })),
        LEASE_MS,
      );
    });

    it('should give back only what failed, flagged by whether it was an outage', async () => {
      const [good, poison] = [payload('a'), payload('b')];
      usage.claimUsage.mockResolvedValueOnce(claim([good, poison]));
      failWhenHolding([poison], badValue);
      usage.retryLater.mockResolvedValue(500);

      await expect(sut.settleRecorded()).resolves.toEqual({ settled: 1, retryInMs: 500 });

      expect(usage.retryLater).toHaveBeenCalledWith(
        [{ accountId: 'b', requestId: poison.requestId, databaseUnavailable: false }],
        LEASE_MS,
      );
    });

    it('should leave an unreadable recording for an operator and settle the rest', async () => {
      const good = payload('a');
      usage.claimUsage.mockResolvedValueOnce(['{not json', JSON.stringify(good)]);

      await expect(sut.settleRecorded()).resolves.toEqual({ settled: 1, retryInMs: null });

      expect(batch.settle).toHaveBeenCalledWith([good]);
      expect(test.logger.error).toHaveBeenCalledWith({ size: 9 }, 'unreadable usage record; left for an operator');
    });
  });
});
