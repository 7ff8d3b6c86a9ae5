import { randomUUID } from 'node:crypto';
import { RedisClient } from 'src/common/redis/redis-client';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { balanceKeys, keySpendField } from 'src/modules/ledger/balance-gate.keys';
import { BalanceGateService, HoldKey } from 'src/modules/ledger/balance-gate.service';
import { tokenWindowKey } from 'src/modules/rate-limits/rate-limit.keys';
import { testRedis } from 'test/support/test-redis';
import { newTestLogger } from 'test/support/test-service';

/** Holds made outside a request: through a key without a spend limit. */
const NO_LIMIT = { id: '00000000-0000-4000-8000-000000000000', spendLimit: null };

/**
 * A claim reaches every account's usage in the run's Redis, other suites' too: a short lease gives
 * theirs back to their workers soon, where settlement's 60 s would hold their settlement up.
 */
const LEASE_MS = 3_000;

describe(UsageQueueService.name, () => {
  let redis: RedisClient;
  let gate: BalanceGateService;
  let sut: UsageQueueService;

  beforeAll(async () => {
    redis = testRedis();
    gate = new BalanceGateService(redis, newTestLogger());
    sut = new UsageQueueService(redis);
    // An admission waits for the gate's Redis epoch check; snapshots pushed after it are of that epoch.
    await gate.hold(randomUUID(), 'req_first', 1n, NO_LIMIT);
  });

  afterAll(() => redis.quit());

  /** An account whose Redis snapshot holds `balance` (version 1), with a hold of `amount` for a new request. */
  async function held(balance: bigint, amount: bigint): Promise<{ accountId: string; requestId: string }> {
    const [accountId, requestId] = [randomUUID(), `req_${randomUUID()}`];
    await gate.sync(accountId, { balance, version: 1n });
    expect(await gate.hold(accountId, requestId, amount, NO_LIMIT)).toEqual({ outcome: 'held' });
    return { accountId, requestId };
  }

  it('should give an unused hold back once', async () => {
    const { accountId, requestId } = await held(1_000n, 300n);

    await expect(sut.release(accountId, requestId)).resolves.toBe(true);
    await expect(sut.release(accountId, requestId)).resolves.toBe(false);
    expect(await gate.reserved(accountId)).toBe(0n);
  });

  it('should keep a hold whose usage is recorded, and close both when it is settled', async () => {
    const { accountId, requestId } = await held(1_000n, 300n);
    await sut.recordUsage(accountId, requestId, '{"usage":1}');

    await expect(sut.release(accountId, requestId)).resolves.toBe(false);
    expect(await gate.reserved(accountId)).toBe(300n);
    expect(await sut.claimUsage(500, LEASE_MS)).toContain('{"usage":1}');
    expect(await sut.isClaimed(accountId, requestId)).toBe(true);

    await sut.releaseMany([{ accountId, requestId, snapshot: { balance: 700n, version: 2n } }]);

    expect(await gate.reserved(accountId)).toBe(0n);
    expect(await sut.recordedUsage(accountId, requestId)).toBeNull();
    expect(await sut.isClaimed(accountId, requestId)).toBe(false);
    // The settled balance was pushed with it: 700 is what admission now sees.
    expect(await gate.hold(accountId, 'req_next', 701n, NO_LIMIT)).toEqual({
      outcome: 'insufficient',
      available: 700n,
    });
  });

  it("should close a batch's settled holds account by account, more than one script's worth, and push each balance", async () => {
    const accounts: string[] = [randomUUID(), randomUUID()];
    const settled: { accountId: string; requestId: string }[] = [];
    for (const [index, accountId] of accounts.entries()) {
      await gate.sync(accountId, { balance: 10_000n, version: 1n });
      // 150 holds of the first account: two scripts' worth (RELEASED_AT_ONCE).
      for (let hold = 0; hold < (index === 0 ? 150 : 2); hold++) {
        const requestId = `req_${randomUUID()}`;
        expect(await gate.hold(accountId, requestId, 10n, NO_LIMIT)).toEqual({ outcome: 'held' });
        await sut.recordUsage(accountId, requestId, `{"id":"${requestId}"}`);
        settled.push({ accountId, requestId });
      }
    }
    const snapshots = new Map([
      [accounts[0], { balance: 8_500n, version: 151n }],
      [accounts[1], { balance: 9_980n, version: 3n }],
    ]);

    await sut.releaseMany(settled.map((hold) => ({ ...hold, snapshot: snapshots.get(hold.accountId) })));

    for (const { accountId, requestId } of settled) {
      expect(await sut.recordedUsage(accountId, requestId)).toBeNull();
    }
    for (const accountId of accounts) {
      expect(await gate.reserved(accountId)).toBe(0n);
      const { balance } = snapshots.get(accountId)!;
      expect(await gate.hold(accountId, `req_${randomUUID()}`, balance + 1n, NO_LIMIT)).toEqual({
        outcome: 'insufficient',
        available: balance,
      });
    }
  });

  it("should give back each key's holds to the nano-dollar, amounts past 2^53 and a request named twice included", async () => {
    const accountId = randomUUID();
    await gate.sync(accountId, { balance: 2n ** 62n, version: 1n });
    const [first, second] = [randomUUID(), randomUUID()].map((id) => ({ id, spendLimit: null }));
    // Past what a Lua number holds exactly, alone and summed; and small ones beside them.
    const amounts: [HoldKey, bigint][] = [
      [first, 2n ** 53n + 1n],
      [first, 3n],
      [second, 2n ** 52n + 7n],
      [second, 2n ** 52n + 9n],
      [second, 5n],
      [first, 11n],
    ];
    const holds = [];
    for (const [key, amount] of amounts) {
      const requestId = `req_${randomUUID()}`;
      expect(await gate.hold(accountId, requestId, amount, key)).toEqual({ outcome: 'held' });
      await sut.recordUsage(accountId, requestId, '{}');
      holds.push({ accountId, requestId });
    }
    const { keySpend } = balanceKeys(accountId);
    const keyReserved = async (key: HoldKey) =>
      BigInt((await redis.hget(keySpend, keySpendField(key.id, 'reserved'))) ?? '0');
    expect(await gate.reserved(accountId)).toBe(amounts.reduce((sum, [, amount]) => sum + amount, 0n));

    // All but the last, the first of them twice.
    await sut.releaseMany([holds[0], ...holds.slice(0, 5)]);

    expect(await gate.reserved(accountId)).toBe(11n);
    expect([await keyReserved(first), await keyReserved(second)]).toEqual([11n, 0n]);
    await sut.releaseMany([holds[5]]);
    expect([await gate.reserved(accountId), await keyReserved(first)]).toEqual([0n, 0n]);
  });

  it('should give a failed claim back after a backoff, sooner than its lease', async () => {
    const { accountId, requestId } = await held(1_000n, 1n);
    await sut.recordUsage(accountId, requestId, `{"id":"${requestId}"}`);
    expect(await sut.claimUsage(500, LEASE_MS)).toContain(`{"id":"${requestId}"}`);

    const delay = await sut.retryLater([{ accountId, requestId }], LEASE_MS);

    // 0.5 s for a first failure, jittered down to half of it.
    expect(delay).toBeGreaterThanOrEqual(250);
    expect(delay).toBeLessThanOrEqual(500);
    await sut.releaseMany([{ accountId, requestId }]);
  });

  it("should correct the request's token windows with its record, once however often the record is sent", async () => {
    const { accountId, requestId } = await held(1_000n, 300n);
    const windows = [tokenWindowKey(accountId, 'm', 1), tokenWindowKey(accountId, 'm', 1, 'u1')];
    await redis.set(windows[0], 500, 'PX', 60_000);
    await redis.set(windows[1], 500, 'PX', 60_000);
    const correction = { keys: windows, delta: -380 };

    await sut.recordUsage(accountId, requestId, '{"usage":1}', correction);
    // A retry whose first attempt did land (its reply was lost) must not take the tokens back twice.
    await sut.recordUsage(accountId, requestId, '{"usage":1}', correction);
    expect(await redis.mget(windows)).toEqual(['120', '120']);

    // Nor a copy that lands after settlement closed the usage and the hold together.
    await sut.releaseMany([{ accountId, requestId }]);
    await sut.recordUsage(accountId, requestId, '{"usage":1}', correction);
    expect(await redis.mget(windows)).toEqual(['120', '120']);
    await sut.releaseMany([{ accountId, requestId }]);
  });

  it('should not make again a token window that expired before the record', async () => {
    const { accountId, requestId } = await held(1_000n, 300n);
    const gone = tokenWindowKey(accountId, 'm', 2);

    await sut.recordUsage(accountId, requestId, '{"usage":2}', { keys: [gone], delta: 50 });

    expect(await redis.exists(gone)).toBe(0);
    await sut.releaseMany([{ accountId, requestId }]);
  });
});
