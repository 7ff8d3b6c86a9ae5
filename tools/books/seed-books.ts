import { createHash } from 'node:crypto';
import { monthPartition, monthStart, PARTITIONED_TABLES } from 'src/modules/partitions/month-partitions';
import { PartitionsRepository } from 'src/modules/partitions/partitions.repository';
import { DataSource } from 'typeorm';

export interface SeedOptions {
  /** Usage records in all (each with its usage ledger entry). */
  rows: number;
  accounts: number;
  /** Months the rows are spread over, ending with the current one. */
  months: number;
}

export interface SeedResult {
  /** The account the timings read: the first seeded. */
  accountId: string;
  seconds: number;
}

/** What one usage of account `a` costs, in nano-dollars: varied so sums differ between accounts. */
const charge = (a: string) => `(100 + (${a} % 7))`;
/** Every account ends with this balance: its opening credit covers its usage and leaves this. */
const FINAL_BALANCE = 1_000_000;

/**
 * Loads books as settlement would have written them, in a few set-based statements (never row by
 * row): per account an opening credit, then `rows / accounts` usage records spread evenly over the
 * months, each with its usage ledger entry, its ledger reference, and the daily rollups. Entries are
 * inserted in time order per account, so seq, balance_after and the balance agree (ledger:verify
 * passes). Row g belongs to account g % accounts and is its (g / accounts)-th usage.
 */
export async function seedBooks(dataSource: DataSource, options: SeedOptions): Promise<SeedResult> {
  const started = Date.now();
  const perAccount = Math.floor(options.rows / options.accounts);
  const credit = (a: string) => `(${perAccount}::bigint * ${charge(a)} + ${FINAL_BALANCE})`;
  const first = monthStart(new Date(), 1 - options.months);
  const spanMs = Date.now() - first.getTime();
  await createPartitions(dataSource, first);
  await dataSource.query(
    `INSERT INTO accounts (id, email, password_hash, referral_code, balance)
     SELECT md5('seed-account-' || a)::uuid, 'seed-books-' || a || '@example.com', 'not-a-hash', 'seed' || a,
            ${FINAL_BALANCE}
     FROM generate_series(0, $1::int - 1) AS a`,
    [options.accounts],
  );
  await dataSource.query(
    `INSERT INTO ledger_entries (account_id, kind, amount, balance_after, reference, created_at)
     SELECT md5('seed-account-' || a)::uuid, 'adjustment', ${credit('a')}, ${credit('a')}, 'seed-credit-' || a,
            $2::timestamptz
     FROM generate_series(0, $1::int - 1) AS a`,
    [options.accounts, first],
  );
  // g -> account a = g % accounts, its k-th usage k = g / accounts, at first + k steps of the span.
  const rowsSql = `
    FROM (SELECT g, g % $1::int AS a, g / $1::int AS k FROM generate_series(0, $2::bigint - 1) AS g) r,
         LATERAL (SELECT $3::timestamptz + (r.k * $4::double precision / $5::int + r.a) * interval '1 millisecond' AS at) t`;
  await dataSource.query(
    `INSERT INTO usage_records (request_id, account_id, key_id, model_id, channel_id, prompt_tokens, completion_tokens,
       cost, charged, usage_source, status, upstream_latency_ms, created_at)
     SELECT 'seed-' || r.g, md5('seed-account-' || r.a)::uuid, md5('seed-key-' || r.a || '-' || (r.k % 3))::uuid,
            'model-' || (r.g % 5), 'channel-a', 100, 20, ${charge('r.a')}, ${charge('r.a')},
            'upstream', 'completed', 300, t.at
     ${rowsSql}`,
    [options.accounts, perAccount * options.accounts, first, spanMs, perAccount],
  );
  await dataSource.query(
    `INSERT INTO ledger_entries (account_id, kind, amount, balance_after, reference, created_at)
     SELECT md5('seed-account-' || r.a)::uuid, 'usage', -${charge('r.a')},
            ${credit('r.a')} - (r.k + 1) * ${charge('r.a')}, 'seed-' || r.g, t.at
     ${rowsSql}
     ORDER BY r.g`,
    [options.accounts, perAccount * options.accounts, first, spanMs, perAccount],
  );
  await dataSource.query('INSERT INTO ledger_references (kind, reference) SELECT kind, reference FROM ledger_entries');
  await dataSource.query(
    `INSERT INTO usage_daily (account_id, day, model_id, key_id, requests, prompt_tokens, completion_tokens,
       cached_tokens, cache_write_tokens, reasoning_tokens, cost)
     SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, model_id, key_id, COUNT(*), SUM(prompt_tokens),
            SUM(completion_tokens), 0, 0, 0, SUM(cost)
     FROM usage_records GROUP BY 1, 2, 3, 4`,
  );
  await dataSource.query('ANALYZE');
  return { accountId: seedAccountId(0), seconds: (Date.now() - started) / 1000 };
}

/** The id the seed gives account `index`: the SQL's md5('seed-account-' || a)::uuid. */
export function seedAccountId(index: number): string {
  const hex = createHash('md5').update(`seed-account-${index}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Every month's partition from `first` on, and the months the worker keeps ahead, as the worker creates them. */
async function createPartitions(dataSource: DataSource, first: Date): Promise<void> {
  const repository = new PartitionsRepository(dataSource);
  await repository.underMaintenanceLock(async (manager) => {
    for (let month = first; month <= monthStart(new Date(), 2); month = monthStart(month, 1)) {
      for (const table of PARTITIONED_TABLES) {
        await repository.create(manager, monthPartition(table, month));
      }
    }
  });
}
