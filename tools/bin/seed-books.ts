import 'reflect-metadata';
import { Client } from 'pg';
import { loadDatabaseConfig } from 'src/config/app-config';
import { BooksOptions, parseBooksArgs } from 'tools/books/books-options';
import { seedBooks } from 'tools/books/seed-books';
import { productDataSourceOptions } from 'tools/product-dist';
import { timeBooks } from 'tools/books/time-books';
import { DataSource } from 'typeorm';

/**
 * Loads the books at scale (docs/performance.md, "Books at scale") and times the console's bills,
 * usage and ledger queries and ledger:verify for one account. With --fresh it works in a database
 * of its own, migrated with the product's migrations (`npm run build` first), and drops it at the end. Progress goes to stderr,
 * the timings (JSON) to stdout.
 */
async function main(options: BooksOptions): Promise<void> {
  const serverUrl = loadDatabaseConfig().databaseUrl;
  const database = options.fresh ? `books_seed_${Date.now()}_${process.pid}` : null;
  const databaseUrl = database ? withDatabase(serverUrl, database) : serverUrl;
  if (database) {
    await admin(serverUrl, `CREATE DATABASE "${database}"`);
  }
  const dataSource = new DataSource(productDataSourceOptions({ databaseUrl }));
  try {
    await dataSource.initialize();
    await dataSource.runMigrations();
    process.stderr.write(`seeding ${options.rows} usage rows over ${options.accounts} accounts...\n`);
    const seeded = await seedBooks(dataSource, options);
    process.stderr.write(`seeded in ${seeded.seconds.toFixed(1)} s; timing account ${seeded.accountId}\n`);
    const timings = await timeBooks(dataSource, seeded.accountId, options.samples);
    process.stdout.write(`${JSON.stringify({ options, seedSeconds: seeded.seconds, timings }, null, 2)}\n`);
  } finally {
    await dataSource.destroy();
    if (database) {
      await admin(serverUrl, `DROP DATABASE IF EXISTS "${database}"`);
    }
  }
}

/** `serverUrl` with its database replaced by `database`. */
function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

let options: BooksOptions;
try {
  options = parseBooksArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}
main(options).then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`seed-books failed: ${error.message}\n`);
    process.exit(1);
  },
);
