import { monthPartition, monthStart, PARTITIONED_TABLES } from 'src/modules/partitions/month-partitions';
import { PartitionsRepository } from 'src/modules/partitions/partitions.repository';
import { DataSource } from 'typeorm';

export interface RequestLogSeed {
  rows: number;
  accounts: number;
  months: number;
}

/** Keys per account, models and channels the rows are spread over. */
export const SEED_SHAPE = { keysPerAccount: 3, models: 20, channels: 10 } as const;

/**
 * Loads usage records only (no ledger: the request log reads none), set-based, in one statement per
 * month so progress shows. Row g: account g % accounts, key g % 3 of it, model g % 20, channel g % 10;
 * 1 in 200 ends upstream_broken and 3 in 200 client_aborted; 3 in 10 carry a client request id
 * ('client-' || g); every one a provider id. Times are spread evenly, newest now.
 */
export async function seedRequestLog(
  dataSource: DataSource,
  options: RequestLogSeed,
  progress: (line: string) => void,
): Promise<void> {
  const first = monthStart(new Date(), 1 - options.months);
  const repository = new PartitionsRepository(dataSource);
  await repository.underMaintenanceLock(async (manager) => {
    for (let month = first; month <= monthStart(new Date(), 2); month = monthStart(month, 1)) {
      for (const table of PARTITIONED_TABLES) {
        await repository.create(manager, monthPartition(table, month));
      }
    }
  });
  await dataSource.query(
    `INSERT INTO accounts (id, email, password_hash, referral_code, balance)
     SELECT md5('seed-account-' || a)::uuid, 'seed-log-' || a || '@example.com', 'not-a-hash', 'seedlog' || a, 0
     FROM generate_series(0, $1::int - 1) AS a`,
    [options.accounts],
  );
  await dataSource.query(
    `INSERT INTO api_keys (id, account_id, name, key_hash, key_prefix)
     SELECT md5('seed-key-' || a || '-' || k)::uuid, md5('seed-account-' || a)::uuid, 'seed', md5('hash-' || a || '-' || k),
            'sk-' || left(md5('p' || a || k), 4)
     FROM generate_series(0, $1::int - 1) AS a, generate_series(0, $2::int - 1) AS k`,
    [options.accounts, SEED_SHAPE.keysPerAccount],
  );
  const startMs = first.getTime();
  const stepMs = (Date.now() - startMs) / options.rows;
  const chunk = Math.ceil(options.rows / 20);
  for (let from = 0; from < options.rows; from += chunk) {
    const to = Math.min(options.rows, from + chunk);
    const started = Date.now();
    await dataSource.query(
      `INSERT INTO usage_records (request_id, account_id, key_id, model_id, channel_id, prompt_tokens, completion_tokens,
         cached_tokens, reasoning_tokens, cost, charged, usage_source, status, upstream_latency_ms, client_request_id,
         provider_request_id, first_byte_ms, created_at)
       SELECT 'req-' || g, md5('seed-account-' || (g % $3))::uuid,
              md5('seed-key-' || (g % $3) || '-' || ((g / $3) % $4))::uuid,
              'model-' || (g % $5), 'channel-' || (g % $6), 1000, 200, 100, 50, 1500, 1500, 'upstream',
              CASE WHEN g % 200 = 7 THEN 'upstream_broken' WHEN g % 200 IN (1, 2, 3) THEN 'client_aborted'
                   ELSE 'completed' END,
              300 + g % 900, CASE WHEN g % 10 < 3 THEN 'client-' || g END, 'prov-' || g, 50 + g % 400,
              to_timestamp(($7::double precision + g * $8::double precision) / 1000)
       FROM generate_series($1::bigint, $2::bigint - 1) AS g`,
      [from, to, options.accounts, SEED_SHAPE.keysPerAccount, SEED_SHAPE.models, SEED_SHAPE.channels, startMs, stepMs],
    );
    progress(`${to} rows (${((Date.now() - started) / 1000).toFixed(1)} s for the last ${to - from})`);
  }
  await dataSource.query('ANALYZE');
}
