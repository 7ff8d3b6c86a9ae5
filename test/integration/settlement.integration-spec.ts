import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { loadConfig } from 'src/config/app-config';
import { KeySpendRepository } from 'src/modules/billing/key-spend.repository';
import { SettlementBatchService } from 'src/modules/billing/settlement-batch.service';
import { isLockTimeout, SettlementRepository } from 'src/modules/billing/settlement.repository';
import { newReference, TestDb } from 'test/integration/integration-helpers';

/** A usage of `accountId` that costs exactly `nanos` (one completion token). */
function payload(accountId: string, nanos: bigint, overrides: Partial<SettleCompletionPayload> = {}) {
  return {
    requestId: newReference('req'),
    accountId,
    keyId: randomUUID(),
    modelId: 'model-a',
    channelId: 'channel-a',
    inputPrice: '0',
    outputPrice: (nanos * 1_000_000n).toString(),
    promptTokens: 0,
    completionTokens: 1,
    usageSource: 'upstream',
    status: 'completed',
    upstreamLatencyMs: 12,
    // A request received now: its month's partition exists (the migration creates this month's and two ahead).
    createdAt: new Date().toISOString(),
    ...overrides,
  } satisfies SettleCompletionPayload;
}

let db: TestDb;
let repository: SettlementRepository;

beforeAll(async () => {
  db = await TestDb.open();
  repository = new SettlementRepository(db.dataSource);
});

afterAll(() => db.close());

describe(SettlementRepository.name, () => {
  it('should give up waiting for a row another transaction holds once the lock timeout passes', async () => {
    const account = await db.newAccount();
    const operator = new Client({ connectionString: process.env.DATABASE_URL });
    await operator.connect();
    try {
      await operator.query('BEGIN');
      await operator.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [account]);
      const started = Date.now();

      const error: unknown = await repository
        .inTransaction(200, (manager) => db.ledger.lockBalances(manager, [account]))
        .catch((failure: unknown) => failure);

      expect(isLockTimeout((error as { driverError?: unknown }).driverError)).toBe(true);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await operator.query('ROLLBACK');
      await operator.end();
    }
  });

  it('should give an invitee that has not verified its e-mail no referrer: its referral is not in effect yet', async () => {
    const referrer = await db.newAccount();
    const invitee = await db.newAccount({ referredBy: referrer, verified: false });

    const referrers = await repository.findReferrers(db.dataSource.manager, [invitee]);

    expect(referrers).toEqual(new Map([[invitee, null]]));
  });

  it("should find each account's referrer, leaving out accounts that do not exist", async () => {
    const referrer = await db.newAccount();
    const invitee = await db.newAccount({ referredBy: referrer });

    const referrers = await repository.findReferrers(db.dataSource.manager, [invitee, referrer, randomUUID()]);

    expect(referrers).toEqual(
      new Map([
        [invitee, referrer],
        [referrer, null],
      ]),
    );
  });

  it('should store usage records with their cached, cache-write and reasoning tokens, and find them settled', async () => {
    const account = await db.newAccount();
    const first = payload(account, 30n);
    const second = { ...payload(account, 40n), cachedTokens: 5, cacheWriteTokens: 2, reasoningTokens: 3 };
    const charges = new Map([
      [first.requestId, { cost: 30n, charged: 30n }],
      [second.requestId, { cost: 40n, charged: 25n }],
    ]);

    await repository.insertUsageRecords(db.dataSource.manager, [first, second], charges);

    const never = { requestId: 'req_never', createdAt: first.createdAt };
    const settled = await repository.findSettled(db.dataSource.manager, [first, never, second]);
    expect(settled).toEqual(new Set([first.requestId, second.requestId]));
    const rows = await db.dataSource.query<unknown[]>(
      `SELECT cost, charged, created_at, cached_tokens, cache_write_tokens, reasoning_tokens
       FROM usage_records WHERE request_id = ANY($1) ORDER BY cost`,
      [[first.requestId, second.requestId]],
    );
    const details = (cached: number, cacheWrite: number, reasoning: number) => ({
      cached_tokens: cached,
      cache_write_tokens: cacheWrite,
      reasoning_tokens: reasoning,
    });
    expect(rows).toEqual([
      { cost: '30', charged: '30', created_at: new Date(first.createdAt), ...details(0, 0, 0) },
      { cost: '40', charged: '25', created_at: new Date(second.createdAt), ...details(5, 2, 3) },
    ]);
  });

  it('should add to the daily rollup, row by row', async () => {
    const account = await db.newAccount();
    const keyId = randomUUID();
    const total = {
      accountId: account,
      day: '2026-03-04',
      modelId: 'model-a',
      keyId,
      requests: 2,
      prompt: 10n,
      completion: 20n,
      cached: 4n,
      cacheWrite: 3n,
      reasoning: 7n,
      cost: 5_000_000_000_000n,
    };

    await repository.addUsageDaily(db.dataSource.manager, [total]);
    await repository.addUsageDaily(db.dataSource.manager, [{ ...total, requests: 1, cost: 1n }]);

    const rows = await db.dataSource.query(
      `SELECT day::text, requests, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens,
              reasoning_tokens, cost
       FROM usage_daily WHERE account_id = $1`,
      [account],
    );
    expect(rows).toEqual([
      {
        day: '2026-03-04',
        requests: 3,
        prompt_tokens: '20',
        completion_tokens: '40',
        cached_tokens: '8',
        cache_write_tokens: '6',
        reasoning_tokens: '14',
        cost: '5000000000001',
      },
    ]);
  });
});

describe(SettlementBatchService.name, () => {
  const config = loadConfig({ NODE_ENV: 'test', REFERRAL_SHARE_PERCENT: '10' });
  let sut: SettlementBatchService;

  beforeAll(() => {
    sut = new SettlementBatchService(repository, db.ledger, new KeySpendRepository(db.dataSource), config);
  });

  it('should charge, credit the referrer and roll up the day in one transaction, and charge nothing twice', async () => {
    const referrer = await db.newAccount({ balance: 50n });
    const invitee = await db.newAccount({ balance: 1_000n, referredBy: referrer });
    const cheap = payload(invitee, 300n);
    const short = payload(invitee, 900n, { modelId: 'model-b' });
    const stranger = payload(randomUUID(), 10n);

    const result = await sut.settle([cheap, short, stranger, cheap]);

    expect(result.applied).toEqual([cheap.requestId, short.requestId]);
    expect(result.unknownAccounts).toEqual([stranger.requestId]);
    expect(result.shortfalls).toEqual([{ requestId: short.requestId, accountId: invitee, missing: 200n }]);
    expect(result.snapshots).toEqual(
      new Map([
        [referrer, await db.balanceOf(referrer)],
        [invitee, await db.balanceOf(invitee)],
      ]),
    );
    expect((await db.balanceOf(invitee)).balance).toBe(0n);
    // 10 % of 300 and of the 700 charged, not of the 900 the usage cost.
    expect((await db.entriesOf(referrer)).map((entry) => [entry.kind, entry.amount])).toEqual([
      ['referral_credit', 30n],
      ['referral_credit', 70n],
    ]);
    const daily = await db.dataSource.query<{ model_id: string; requests: number; cost: string }[]>(
      'SELECT model_id, requests, cost FROM usage_daily WHERE account_id = $1 ORDER BY model_id',
      [invitee],
    );
    expect(daily).toEqual([
      { model_id: 'model-a', requests: 1, cost: '300' },
      { model_id: 'model-b', requests: 1, cost: '700' },
    ]);

    const again = await sut.settle([cheap, short]);

    expect(again.applied).toEqual([]);
    expect((await db.balanceOf(referrer)).balance).toBe(150n);
    expect(await db.unbalanced([referrer, invitee])).toEqual([]);
  });

  it("should add what the balance covered to the key's spent once, and read it back on a repeat", async () => {
    const account = await db.newAccount({ balance: 1_000n });
    const [{ id: keyId }] = await db.dataSource.query<{ id: string }[]>(
      `INSERT INTO api_keys (account_id, name, key_hash, key_prefix) VALUES ($1, 'k', $2, 'sk-x') RETURNING id`,
      [account, randomUUID()],
    );
    const first = payload(account, 300n, { keyId });
    const short = payload(account, 900n, { keyId });
    const otherKey = payload(account, 1n);

    const result = await sut.settle([first, short, otherKey]);

    // 300, then the 700 the balance still covered of 900; the other key has no row and is left out.
    expect(result.keySpent).toEqual(new Map([[keyId, 1_000n]]));
    const again = await sut.settle([first, short]);
    expect(again.applied).toEqual([]);
    expect(again.keySpent).toEqual(new Map([[keyId, 1_000n]]));
    const [row] = await db.dataSource.query<{ spent: string }[]>('SELECT spent FROM api_keys WHERE id = $1', [keyId]);
    expect(row.spent).toBe('1000');
  });

  it("should find usages settled before without reading the month's other usage records", async () => {
    // A month's partition holds every usage settled that month; the check runs in every batch. Without
    // statistics (before the partition's first ANALYZE, or with autovacuum off) it must still probe.
    const account = await db.newAccount();
    const month = Array.from({ length: 2_000 }, () => payload(account, 1n));
    await repository.insertUsageRecords(
      db.dataSource.manager,
      month,
      new Map(month.map((usage) => [usage.requestId, { cost: 1n, charged: 1n }])),
    );
    const batch = [...month.slice(0, 50), ...Array.from({ length: 50 }, () => payload(account, 1n))];

    const { settled, reads } = await db.dataSource.transaction(async (manager) => {
      // The backend's own counts not yet reported: exact, unlike the server-wide ones, but they may hold
      // an earlier transaction's on the same connection, hence the difference.
      const scans = async () => {
        const [counts] = await manager.query<{ scans: string; rows: string }[]>(
          `SELECT COALESCE(SUM(seq_scan), 0) AS scans, COALESCE(SUM(seq_tup_read), 0) AS rows
           FROM pg_stat_xact_user_tables WHERE relname LIKE 'usage_records_p%'`,
        );
        return { scans: Number(counts.scans), rows: Number(counts.rows) };
      };
      const before = await scans();
      const found = await repository.findSettled(manager, batch);
      const after = await scans();
      return { settled: found, reads: { scans: after.scans - before.scans, rows: after.rows - before.rows } };
    });

    expect(settled).toEqual(new Set(month.slice(0, 50).map((usage) => usage.requestId)));
    expect(reads).toEqual({ scans: 0, rows: 0 });
  });

  it('should write nothing of a batch when one of its writes fails', async () => {
    const account = await db.newAccount({ balance: 1_000n });
    const before = await db.balanceOf(account);
    const good = payload(account, 10n);
    const poison = payload(account, 10n, { keyId: 'not-a-uuid' });

    await expect(sut.settle([good, poison])).rejects.toThrow(/uuid/);

    expect(await db.balanceOf(account)).toEqual(before);
    expect(await db.entriesOf(account)).toEqual([]);
    expect(await repository.findSettled(db.dataSource.manager, [good])).toEqual(new Set());
  });

  it('should settle concurrent batches that share accounts without a deadlock or a lost charge', async () => {
    const accounts = await Promise.all(Array.from({ length: 6 }, () => db.newAccount({ balance: 10_000n })));
    // Each batch touches the accounts in another order.
    const batches = Array.from({ length: 6 }, (_, shift) =>
      accounts.map((_, index) => payload(accounts[(index + shift) % accounts.length], BigInt(index + 1))),
    );

    await Promise.all(batches.map((batch) => sut.settle(batch)));

    const charged = (accountIndex: number) =>
      batches.reduce((sum, _, shift) => sum + BigInt(((accountIndex - shift + 6) % 6) + 1), 0n);
    for (const [index, account] of accounts.entries()) {
      expect((await db.balanceOf(account)).balance).toBe(10_000n - charged(index));
    }
    expect(await db.unbalanced(accounts)).toEqual([]);
  });
});
