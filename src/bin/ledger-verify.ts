import 'reflect-metadata';
import { ConfigError, loadDatabaseConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { DataSource } from 'typeorm';

/** `npm run ledger:verify`: exits non-zero when any account's balance differs from the sum of its ledger. */
async function main(): Promise<number> {
  const dataSource = new DataSource(dataSourceOptions(loadDatabaseConfig()));
  await dataSource.initialize();
  try {
    const mismatches = await findLedgerMismatches(dataSource);
    const [{ count }] = await dataSource.query<{ count: string }[]>('SELECT COUNT(*) AS count FROM accounts');
    for (const m of mismatches) {
      process.stdout.write(
        `MISMATCH account ${m.accountId}: balance ${m.balance} nanos, ledger sum ${m.ledgerSum}, last balance_after ${m.lastBalanceAfter}\n`,
      );
    }
    process.stdout.write(`${count} accounts checked, ${mismatches.length} mismatched\n`);
    return mismatches.length === 0 ? 0 : 1;
  } finally {
    await dataSource.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(
      `${error instanceof ConfigError ? error.message : `ledger:verify failed: ${error.message}`}\n`,
    );
    process.exit(2);
  },
);
