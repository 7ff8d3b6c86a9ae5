import 'reflect-metadata';
import { createRedis } from 'src/common/redis/redis-client';
import { ConfigError, loadDatabaseConfig, loadRedisTarget } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { withStatementTimeout } from 'src/common/database/statement-timeout';
import { LEDGER_VERIFY_REPORT_KEY, LedgerVerifyReport } from 'src/modules/ledger/ledger-verify-report';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { findDepositMismatches, findTopupMismatches } from 'src/modules/payments/orders/topup-verifier';
import { DataSource, EntityManager } from 'typeorm';

/**
 * `npm run ledger:verify`: exits non-zero when any account's balance differs from the sum of its ledger,
 * a top-up order and its ledger entry disagree, or a chain deposit and the order it paid. With
 * `--record` it also leaves the result in Redis (REDIS_URL), where the workers' /metrics export it.
 */
async function main(record: boolean): Promise<number> {
  const dataSource = new DataSource(dataSourceOptions(loadDatabaseConfig()));
  await dataSource.initialize();
  let found: number;
  try {
    // Its scans read the whole ledger, which outgrows DATABASE_STATEMENT_TIMEOUT_MS: unbounded here.
    found = await withStatementTimeout(dataSource, 0, verify);
  } finally {
    await dataSource.destroy();
  }
  if (record) {
    await recordReport({ finishedAtMs: Date.now(), mismatches: found });
  }
  return found === 0 ? 0 : 1;
}

/** Prints every mismatch found and returns how many. */
async function verify(db: EntityManager): Promise<number> {
  const mismatches = await findLedgerMismatches(db);
  const [{ count }] = await db.query<{ count: string }[]>('SELECT COUNT(*) AS count FROM accounts');
  for (const m of mismatches) {
    process.stdout.write(
      `MISMATCH account ${m.accountId}: balance ${m.balance} nanos, ledger sum ${m.ledgerSum}, last balance_after ${m.lastBalanceAfter}\n`,
    );
  }
  const topups = await findTopupMismatches(db);
  for (const t of topups) {
    process.stdout.write(`MISMATCH top-up order ${t.orderId} (${t.status}) and ledger entry ${t.entryId}\n`);
  }
  const deposits = await findDepositMismatches(db);
  for (const d of deposits) {
    process.stdout.write(`MISMATCH chain deposit ${d.depositId} and top-up order ${d.orderId}\n`);
  }
  process.stdout.write(
    `${count} accounts checked, ${mismatches.length} mismatched; ${topups.length} top-ups mismatched; ` +
      `${deposits.length} deposits mismatched\n`,
  );
  return mismatches.length + topups.length + deposits.length;
}

async function recordReport(report: LedgerVerifyReport): Promise<void> {
  const redis = createRedis(loadRedisTarget(), { maxRetriesPerRequest: 2, lazyConnect: true });
  try {
    await redis.connect();
    await redis.set(LEDGER_VERIFY_REPORT_KEY, JSON.stringify(report));
  } finally {
    redis.disconnect();
  }
}

main(process.argv.includes('--record')).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(
      `${error instanceof ConfigError ? error.message : `ledger:verify failed: ${error.message}`}\n`,
    );
    process.exit(2);
  },
);
