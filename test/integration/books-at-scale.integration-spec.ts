import { Client } from 'pg';
import { dataSourceOptions } from 'src/database/data-source.options';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { monthPartition, monthStart } from 'src/modules/partitions/month-partitions';
import { withDatabase } from 'test/support/test-database';
import { seedBooks } from 'tools/books/seed-books';
import { bookQueries, partitionsScanned, timeBooks } from 'tools/books/time-books';
import { DataSource } from 'typeorm';

// Its own database: the seed fills whole months, which the run's shared database must not get.
const database = `gateway_books_test_${Date.now()}_${process.pid}`;
const databaseUrl = withDatabase(process.env.DATABASE_URL!, database);
const ROWS = 50_000;
const ACCOUNTS = 100;
const MONTHS = 4;

async function adminQuery(sql: string): Promise<void> {
  const admin = new Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

let dataSource: DataSource;
let accountId: string;

beforeAll(async () => {
  await adminQuery(`CREATE DATABASE "${database}"`);
  dataSource = new DataSource(dataSourceOptions({ databaseUrl }));
  await dataSource.initialize();
  await dataSource.runMigrations();
  ({ accountId } = await seedBooks(dataSource, { rows: ROWS, accounts: ACCOUNTS, months: MONTHS }));
}, 180_000);

afterAll(async () => {
  await dataSource?.destroy();
  await adminQuery(`DROP DATABASE IF EXISTS "${database}"`);
});

describe('books at scale (small)', () => {
  it('should load the usage rows, their ledger entries and rollups with the books verifying clean', async () => {
    const [counts] = await dataSource.query<{ usage: number; entries: number; references: number; requests: number }[]>(
      `SELECT (SELECT COUNT(*) FROM usage_records)::int AS usage, (SELECT COUNT(*) FROM ledger_entries)::int AS entries,
              (SELECT COUNT(*) FROM ledger_references)::int AS references,
              (SELECT SUM(requests) FROM usage_daily)::int AS requests`,
    );
    expect(counts).toEqual({ usage: ROWS, entries: ROWS + ACCOUNTS, references: ROWS + ACCOUNTS, requests: ROWS });
    expect(await findLedgerMismatches(dataSource)).toEqual([]);
    const [{ months }] = await dataSource.query<{ months: number }[]>(
      'SELECT COUNT(DISTINCT tableoid)::int AS months FROM usage_records',
    );
    expect(months).toBe(MONTHS);
  });

  it('should read only the months a bounded query asks for (partition pruning in the plan)', async () => {
    const queries = (source: DataSource) => bookQueries(source, accountId);
    const lastWeekFrom = monthStart(new Date(Date.now() - 7 * 86_400_000));
    const recentMonths = (table: 'usage_records' | 'ledger_entries') =>
      [...new Set([lastWeekFrom, monthStart(new Date())].map((month) => monthPartition(table, month).name))].sort();

    const bills = await partitionsScanned(dataSource, (source) => queries(source)['bills, last 7 days']());
    const ledger = await partitionsScanned(dataSource, (source) => queries(source)['ledger, last 7 days']());
    const allBills = await partitionsScanned(dataSource, (source) => queries(source)['bills, first page']());

    expect(bills).toEqual(recentMonths('usage_records'));
    expect(ledger).toEqual(recentMonths('ledger_entries'));
    // Unbounded, the plan names every month (read newest first, stopping at the page's end).
    expect(allBills.length).toBeGreaterThanOrEqual(MONTHS);
    // The usage view reads the daily rollups, never the detail.
    expect(
      await partitionsScanned(dataSource, (source) => queries(source)['usage by day and model, last 7 days']()),
    ).toEqual(['usage_daily']);
  });

  it('should time every console query and the one-account ledger check', async () => {
    const timings = await timeBooks(dataSource, accountId, 3);

    expect(timings.map((timing) => timing.query)).toEqual(Object.keys(bookQueries(dataSource, accountId)));
    for (const timing of timings) {
      expect(timing.p95Ms).toBeGreaterThan(0);
    }
  });
});
