import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import pino from 'pino';
import { workerMetricsRegistry } from 'src/common/metrics/worker-metrics';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { loadConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { KeySpendRepository } from 'src/modules/billing/key-spend.repository';
import { SettlementBatchService } from 'src/modules/billing/settlement-batch.service';
import { SettlementRepository } from 'src/modules/billing/settlement.repository';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';
import { monthPartition, monthStart } from 'src/modules/partitions/month-partitions';
import { PartitionMaintenanceService } from 'src/modules/partitions/partition-maintenance.service';
import { PartitionsRepository } from 'src/modules/partitions/partitions.repository';
import { withDatabase } from 'test/support/test-database';
import { DataSource } from 'typeorm';

const MIGRATIONS_DIR = join(__dirname, '..', '..', 'migrations');
const PARTITION_MIGRATION = '1795680000000-PartitionBooks.ts';
const migrationsBefore = readdirSync(MIGRATIONS_DIR)
  .filter((file) => file.endsWith('.ts') && file < PARTITION_MIGRATION)
  .map((file) => join(MIGRATIONS_DIR, file));

// Its own database (the run's shared one is migrated already): migrated up to the partitioning, filled, then migrated on.
const database = `gateway_partitions_test_${Date.now()}_${process.pid}`;
const databaseUrl = withDatabase(process.env.DATABASE_URL!, database);
const MONTHS_BACK = 3;
const ACCOUNTS = 3;
const USAGES_PER_MONTH = 5;
const USAGE_NANOS = 100n;
const CREDIT = 1_000_000n;

async function adminQuery(sql: string): Promise<void> {
  const admin = new Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * Books written before partitioning, as settlement wrote them: per account a credit, then usage
 * records in each of the last months with their usage entries, balances running down.
 */
async function fillOldBooks(dataSource: DataSource): Promise<string[]> {
  const accounts: string[] = [];
  for (let index = 0; index < ACCOUNTS; index++) {
    const [{ id }] = await dataSource.query<{ id: string }[]>(
      `INSERT INTO accounts (email, password_hash, referral_code) VALUES ($1, 'not-a-hash', $2) RETURNING id`,
      [`partitions-${randomUUID()}@example.com`, randomUUID().slice(0, 12)],
    );
    accounts.push(id);
  }
  const oldest = monthStart(new Date(), -MONTHS_BACK);
  await dataSource.query(
    `INSERT INTO ledger_entries (account_id, kind, amount, balance_after, reference, created_at)
     SELECT a, 'adjustment', $2, $2, 'credit:' || a, $3::timestamptz FROM unnest($1::uuid[]) AS a`,
    [accounts, CREDIT.toString(), oldest],
  );
  await dataSource.query(
    `INSERT INTO usage_records (request_id, account_id, key_id, model_id, channel_id, prompt_tokens, completion_tokens,
       cost, charged, usage_source, status, upstream_latency_ms, created_at)
     SELECT 'old-' || a || '-' || m || '-' || i, a, gen_random_uuid(), 'model-a', 'channel-a', 0, 1, $2, $2,
            'upstream', 'completed', 10, $3::timestamptz + make_interval(months => m, hours => i)
     FROM unnest($1::uuid[]) AS a, generate_series(0, $4::int) AS m, generate_series(1, $5::int) AS i`,
    [accounts, USAGE_NANOS.toString(), oldest, MONTHS_BACK, USAGES_PER_MONTH],
  );
  await dataSource.query(
    `INSERT INTO ledger_entries (account_id, kind, amount, balance_after, reference, created_at)
     SELECT account_id, 'usage', -charged, 0, request_id, created_at FROM usage_records ORDER BY created_at`,
  );
  await dataSource.query(
    `UPDATE ledger_entries e SET balance_after = r.running
     FROM (SELECT id, SUM(amount) OVER (PARTITION BY account_id ORDER BY seq) AS running FROM ledger_entries) r
     WHERE r.id = e.id`,
  );
  await dataSource.query(
    `UPDATE accounts a SET balance = s.total FROM (SELECT account_id, SUM(amount) AS total FROM ledger_entries
     GROUP BY account_id) s WHERE s.account_id = a.id`,
  );
  return accounts;
}

async function books(dataSource: DataSource) {
  const [row] = await dataSource.query<Record<string, string>[]>(
    `SELECT (SELECT COUNT(*) FROM usage_records)::text AS usage_rows,
            (SELECT SUM(charged) FROM usage_records)::text AS charged,
            (SELECT COUNT(*) FROM ledger_entries)::text AS ledger_rows,
            (SELECT SUM(amount) FROM ledger_entries)::text AS ledger_sum,
            (SELECT MAX(seq) FROM ledger_entries)::text AS last_seq,
            (SELECT string_agg(id::text || seq || balance_after, ',' ORDER BY seq) FROM ledger_entries) AS entries`,
  );
  return row;
}

let dataSource: DataSource;
let accounts: string[];
let before: Record<string, string>;

beforeAll(async () => {
  await adminQuery(`CREATE DATABASE "${database}"`);
  const old = new DataSource({ ...dataSourceOptions({ databaseUrl }), migrations: migrationsBefore });
  await old.initialize();
  await old.runMigrations();
  accounts = await fillOldBooks(old);
  before = await books(old);
  expect(await findLedgerMismatches(old)).toEqual([]);
  await old.destroy();

  dataSource = new DataSource(dataSourceOptions({ databaseUrl }));
  await dataSource.initialize();
  await dataSource.runMigrations();
}, 120_000);

afterAll(async () => {
  await dataSource?.destroy();
  await adminQuery(`DROP DATABASE IF EXISTS "${database}"`);
});

describe('PartitionBooks migration', () => {
  it('should keep every row, entry order and balance, with the books verifying clean', async () => {
    expect(await books(dataSource)).toEqual(before);
    expect(Number(before.usage_rows)).toBe(ACCOUNTS * (MONTHS_BACK + 1) * USAGES_PER_MONTH);
    expect(await findLedgerMismatches(dataSource)).toEqual([]);
  });

  it("should file each row in its month's partition, from the oldest month to two months ahead", async () => {
    const rows = await dataSource.query<{ partition: string; rows: number }[]>(
      `SELECT tableoid::regclass::text AS partition, COUNT(*)::int AS rows FROM usage_records GROUP BY 1 ORDER BY 1`,
    );
    const months = Array.from({ length: MONTHS_BACK + 1 }, (_, k) => monthStart(new Date(), k - MONTHS_BACK));
    expect(rows).toEqual(
      months.map((month) => ({
        partition: monthPartition('usage_records', month).name,
        rows: ACCOUNTS * USAGES_PER_MONTH,
      })),
    );
    const partitions = await new PartitionsRepository(dataSource).partitionsOf(dataSource.manager, 'ledger_entries');
    expect(partitions).toEqual(
      [...months, monthStart(new Date(), 1), monthStart(new Date(), 2)].map(
        (month) => monthPartition('ledger_entries', month).name,
      ),
    );
  });

  it('should continue seq after the last entry and refuse a posting applied before the migration', async () => {
    const ledger = new LedgerRepository(dataSource);
    const [account] = accounts;

    const replayed = await ledger.post({
      accountId: account,
      kind: 'adjustment',
      amount: 5n,
      reference: `credit:${account}`,
    });
    const applied = await ledger.post({ accountId: account, kind: 'adjustment', amount: 5n, reference: randomUUID() });

    expect(replayed.outcome).toBe('replayed');
    expect(applied.outcome).toBe('applied');
    expect(BigInt(applied.outcome === 'applied' ? applied.entry.seq : 0)).toBe(BigInt(before.last_seq) + 1n);
    expect(await findLedgerMismatches(dataSource)).toEqual([]);
  });

  it('should settle the same batch twice and charge once, and charge nothing for usage settled before', async () => {
    const sut = new SettlementBatchService(
      new SettlementRepository(dataSource),
      new LedgerRepository(dataSource),
      new KeySpendRepository(dataSource),
      loadConfig({ NODE_ENV: 'test' }),
    );
    const [, account] = accounts;
    const usage = (requestId: string, createdAt: Date): SettleCompletionPayload => ({
      requestId,
      accountId: account,
      keyId: randomUUID(),
      modelId: 'model-a',
      channelId: 'channel-a',
      inputPrice: '0',
      outputPrice: (USAGE_NANOS * 1_000_000n).toString(),
      promptTokens: 0,
      completionTokens: 1,
      usageSource: 'upstream',
      status: 'completed',
      upstreamLatencyMs: 10,
      createdAt: createdAt.toISOString(),
    });
    const fresh = usage(`new-${randomUUID()}`, new Date());
    const settledBefore = usage(
      `old-${account}-0-1`,
      new Date(monthStart(new Date(), -MONTHS_BACK).getTime() + 3_600_000),
    );
    const balanceBefore = await balanceOf(account);

    const first = await sut.settle([fresh, settledBefore]);
    const second = await sut.settle([fresh, settledBefore]);

    expect(first.applied).toEqual([fresh.requestId]);
    expect(second.applied).toEqual([]);
    expect(await balanceOf(account)).toBe(balanceBefore - USAGE_NANOS);
    const [{ entries }] = await dataSource.query<{ entries: number }[]>(
      `SELECT COUNT(*)::int AS entries FROM ledger_entries WHERE kind = 'usage' AND reference = $1`,
      [fresh.requestId],
    );
    expect(entries).toBe(1);
    expect(await findLedgerMismatches(dataSource)).toEqual([]);
  });
});

describe(PartitionMaintenanceService.name, () => {
  const service = (retentionMonths?: number, source = dataSource) =>
    new PartitionMaintenanceService(
      new PartitionsRepository(source),
      loadConfig({ NODE_ENV: 'test', USAGE_DETAIL_RETENTION_MONTHS: retentionMonths?.toString() }),
      pino({ level: 'silent' }),
    );

  it('should create the partitions ahead once, however many workers run it at the same time', async () => {
    const later = monthStart(new Date(), 4);
    const other = new DataSource(dataSourceOptions({ databaseUrl }));
    await other.initialize();
    try {
      const results = await Promise.all([
        service(undefined).maintain(later),
        service(undefined, other).maintain(later),
      ]);

      const created = results.flatMap((result) => result.created).sort();
      const expected = [4, 5, 6].flatMap((offset) => [
        monthPartition('ledger_entries', monthStart(new Date(), offset)).name,
        monthPartition('usage_records', monthStart(new Date(), offset)).name,
      ]);
      expect(created).toEqual(expected.sort());
      expect(await service(undefined).maintain(later)).toEqual({ created: [], dropped: [] });
      // What the partition-maintenance alerts read: two months after `later`'s, and a fresh success.
      expect(await workerGauge('gateway_partition_months_ahead')).toBe(2);
      expect(await workerGauge('gateway_partition_maintenance_last_success_timestamp_seconds')).toBeGreaterThan(
        Date.now() / 1000 - 60,
      );
    } finally {
      await other.destroy();
    }
  });

  it('should drop usage detail past retention, and keep the ledger and the daily totals', async () => {
    const partitions = new PartitionsRepository(dataSource);
    const ledgerBefore = await partitions.partitionsOf(dataSource.manager, 'ledger_entries');
    const [{ rows: dailyBefore }] = await dataSource.query<{ rows: number }[]>(
      'SELECT COUNT(*)::int AS rows FROM usage_daily',
    );

    const result = await service(1).maintain(new Date());

    const dropped = [MONTHS_BACK, MONTHS_BACK - 1].map(
      (back) => monthPartition('usage_records', monthStart(new Date(), -back)).name,
    );
    expect(result.dropped.sort()).toEqual(dropped.sort());
    expect(await partitions.partitionsOf(dataSource.manager, 'usage_records')).not.toEqual(
      expect.arrayContaining([dropped[0]]),
    );
    const [{ oldest }] = await dataSource.query<{ oldest: Date }[]>(
      'SELECT MIN(created_at) AS oldest FROM usage_records',
    );
    expect(oldest.getTime()).toBeGreaterThanOrEqual(monthStart(new Date(), -1).getTime());
    expect(await partitions.partitionsOf(dataSource.manager, 'ledger_entries')).toEqual(ledgerBefore);
    const [{ rows: dailyAfter }] = await dataSource.query<{ rows: number }[]>(
      'SELECT COUNT(*)::int AS rows FROM usage_daily',
    );
    expect(dailyAfter).toBe(dailyBefore);
    expect(await findLedgerMismatches(dataSource)).toEqual([]);
  });
});

async function balanceOf(accountId: string): Promise<bigint> {
  const [row] = await dataSource.query<{ balance: string }[]>('SELECT balance FROM accounts WHERE id = $1', [
    accountId,
  ]);
  return BigInt(row.balance);
}

/** The current value of an unlabelled gauge of the worker's registry. */
async function workerGauge(name: string): Promise<number | undefined> {
  return (await workerMetricsRegistry.getSingleMetric(name)!.get()).values[0]?.value;
}
