import { randomUUID } from 'node:crypto';
import { RedisClient } from 'src/common/redis/redis-client';
import { AdmissionCounters, BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { requestWindowKey, tokenWindowKey } from 'src/modules/rate-limits/rate-limit.keys';
import { testRedis } from 'test/support/test-redis';
import { newTestLogger } from 'test/support/test-service';

const NO_LIMIT = { id: '00000000-0000-4000-8000-000000000000', spendLimit: null };

/**
 * The admission's one script: requests per minute, tokens per minute and the balance hold counted
 * in one step, the first refusal answering, with exactly what each refusal leaves counted.
 */
describe('admission counters in the hold script', () => {
  let redis: RedisClient;
  let gate: BalanceGateService;

  beforeAll(async () => {
    redis = testRedis();
    gate = new BalanceGateService(redis, newTestLogger());
    // An admission waits for the gate's Redis epoch check; snapshots pushed after it are of that epoch.
    await gate.hold(randomUUID(), 'req_first', 1n, NO_LIMIT);
  });

  afterAll(() => redis.quit());

  /** An account with `balance` in Redis, and its windows on one model: requests (limit 2), tokens (limit 100). */
  async function account(balance: bigint) {
    const accountId = randomUUID();
    await gate.sync(accountId, { balance, version: 1n });
    const requestKey = requestWindowKey(accountId, 'm');
    const tokenKey = tokenWindowKey(accountId, 'm', 1);
    const counters = (tokens: number): AdmissionCounters => ({
      requests: { keys: [requestKey], limits: [2], ttlMs: 60_000 },
      tokens: { keys: [tokenKey], limits: [100], amount: tokens, ttlMs: 60_000 },
    });
    const counted = async () => ({
      requests: Number((await redis.get(requestKey)) ?? 0),
      tokens: Number((await redis.get(tokenKey)) ?? 0),
      reserved: await gate.reserved(accountId),
    });
    const admit = (requestId: string, amount: bigint, tokens: number) =>
      gate.admit(accountId, requestId, amount, NO_LIMIT, counters(tokens));
    return { accountId, admit, counted };
  }

  it('should count the request and its tokens and hold its cost in one step', async () => {
    const { admit, counted } = await account(1_000n);

    const { hold, counts } = await admit('req_1', 300n, 40);

    expect(hold).toEqual({ outcome: 'held' });
    expect(counts.requests).toMatchObject({ refusedBy: -1, hits: 1 });
    expect(counts.requests.resetMs).toBeGreaterThan(59_000);
    expect(counts.tokens).toEqual({ refusedBy: -1, used: 40 });
    expect(await counted()).toEqual({ requests: 1, tokens: 40, reserved: 300n });
  });

  it('should refuse a full request window before counting tokens or holding anything', async () => {
    const { admit, counted } = await account(1_000n);
    await admit('req_1', 10n, 1);
    await admit('req_2', 10n, 1);

    const { hold, counts } = await admit('req_3', 10n, 1);

    expect(hold).toEqual({ outcome: 'counterRefused' });
    expect(counts.requests).toMatchObject({ refusedBy: 0, hits: 2 });
    expect(await counted()).toEqual({ requests: 2, tokens: 2, reserved: 20n });
  });

  it('should keep a request refused for its tokens counted in the request window only', async () => {
    const { admit, counted } = await account(1_000n);
    await admit('req_1', 10n, 90);

    const { hold, counts } = await admit('req_2', 10n, 20);

    expect(hold).toEqual({ outcome: 'counterRefused' });
    expect(counts.tokens).toEqual({ refusedBy: 0, used: 90 });
    expect(await counted()).toEqual({ requests: 2, tokens: 90, reserved: 10n });
  });

  it('should keep a request refused for its balance counted in the request window, not in the token window', async () => {
    const { admit, counted } = await account(100n);

    const { hold, counts } = await admit('req_1', 101n, 30);

    expect(hold).toEqual({ outcome: 'insufficient', available: 100n });
    expect(counts).toEqual({
      requests: { refusedBy: -1, hits: 1, resetMs: expect.any(Number) },
      tokens: { refusedBy: -1, used: 0 },
    });
    expect(await counted()).toEqual({ requests: 1, tokens: 0, reserved: 0n });
  });

  it('should count nothing while the balance snapshot is unknown, so that the retry after loading counts once', async () => {
    const { admit, counted } = await account(1_000n);
    const stranger = randomUUID();

    const unknown = await gate.admit(stranger, 'req_1', 10n, NO_LIMIT, {
      requests: { keys: [requestWindowKey(stranger, 'm')], limits: [2], ttlMs: 60_000 },
      tokens: { keys: [tokenWindowKey(stranger, 'm', 1)], limits: [100], amount: 5, ttlMs: 60_000 },
    });

    expect(unknown.hold).toEqual({ outcome: 'unknown' });
    expect(await redis.exists(requestWindowKey(stranger, 'm'), tokenWindowKey(stranger, 'm', 1))).toBe(0);
    // And a repeat of a request already held (a re-send after a reconnect) counts nothing either.
    await admit('req_1', 10n, 5);
    const repeat = await admit('req_1', 10n, 5);
    expect(repeat.hold).toEqual({ outcome: 'held' });
    expect(repeat.counts.tokens.used).toBe(5);
    expect(await counted()).toEqual({ requests: 1, tokens: 5, reserved: 10n });
  });

  it('should answer the end user’s window by its index, counting in neither window', async () => {
    const accountId = randomUUID();
    await gate.sync(accountId, { balance: 1_000n, version: 1n });
    const account = requestWindowKey(accountId, 'm');
    const endUser = requestWindowKey(accountId, 'm', 'u1');
    const counters: AdmissionCounters = {
      requests: { keys: [account, endUser], limits: [10, 1], ttlMs: 60_000 },
      tokens: { keys: [], limits: [], amount: 0, ttlMs: 60_000 },
    };
    await gate.admit(accountId, 'req_1', 1n, NO_LIMIT, counters);

    const { hold, counts } = await gate.admit(accountId, 'req_2', 1n, NO_LIMIT, counters);

    expect(hold).toEqual({ outcome: 'counterRefused' });
    expect(counts.requests).toMatchObject({ refusedBy: 1, hits: 1 });
    expect(await redis.mget(account, endUser)).toEqual(['1', '1']);
  });

  it("should count nothing until a limited key's spend is loaded, then count a request over the key's limit in its request window only", async () => {
    const { accountId } = await account(1_000n);
    const limitedKey = { id: randomUUID(), spendLimit: 100n };
    const windows: AdmissionCounters = {
      requests: { keys: [requestWindowKey(accountId, 'k')], limits: [10], ttlMs: 60_000 },
      tokens: { keys: [tokenWindowKey(accountId, 'k', 1)], limits: [1_000], amount: 7, ttlMs: 60_000 },
    };
    const counted = async () => redis.mget(requestWindowKey(accountId, 'k'), tokenWindowKey(accountId, 'k', 1));

    const unloaded = await gate.admit(accountId, 'req_1', 60n, limitedKey, windows);
    expect(unloaded.hold).toEqual({ outcome: 'keyUnknown' });
    expect(await counted()).toEqual([null, null]);

    await gate.syncKeySpent(accountId, limitedKey.id, 50n);
    const over = await gate.admit(accountId, 'req_1', 60n, limitedKey, windows);

    expect(over.hold).toEqual({ outcome: 'keyLimitReached', left: 50n });
    expect(await counted()).toEqual(['1', null]);
    expect(await gate.reserved(accountId)).toBe(0n);
  });
});
