import 'reflect-metadata';
import { Client } from 'pg';
import { loadDatabaseConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { RequestLogFilter, RequestLogRepository } from 'src/modules/usage/request-log.repository';
import { seedRequestLog } from 'tools/request-log/seed-request-log';
import { DataSource } from 'typeorm';

/**
 * The request log at scale (docs/operators.md, "Request log"): loads `--rows` usage records (default
 * 10,000,000) into a database of its own on DATABASE_URL's server, then runs each filter of
 * `GET /admin/requests` through the real repository under EXPLAIN (ANALYZE, BUFFERS), a page of 51
 * as the API asks, and prints each plan's execution time and the index it used. Drops the database
 * at the end (--keep leaves it). Run from the sources: it needs no build.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     npx ts-node -r tsconfig-paths/register --transpile-only tools/bin/time-request-log.ts --rows 10000000
 */
const PAGE = 51;
const ACCOUNTS = 1_000;
const MONTHS = 6;

interface Timing {
  query: string;
  rows: number;
  executionMs: number[];
  indexes: string[];
}

async function main(rows: number, keep: boolean): Promise<void> {
  const serverUrl = loadDatabaseConfig().databaseUrl;
  const database = `request_log_scale_${Date.now()}_${process.pid}`;
  await admin(serverUrl, `CREATE DATABASE "${database}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const dataSource = new DataSource(dataSourceOptions({ databaseUrl: url.toString() }));
  try {
    await dataSource.initialize();
    await dataSource.runMigrations();
    const started = Date.now();
    await seedRequestLog(dataSource, { rows, accounts: ACCOUNTS, months: MONTHS }, (line) =>
      process.stderr.write(`${line}\n`),
    );
    process.stderr.write(`seeded ${rows} rows in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    const parents = new Map(
      (
        await dataSource.query<{ child: string; parent: string }[]>(
          `SELECT c.relname AS child, p.relname AS parent FROM pg_inherits i
           JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE c.relkind = 'i'`,
        )
      ).map((row) => [row.child, row.parent]),
    );
    const timings: Timing[] = [];
    for (const [query, filter] of Object.entries(filters(rows))) {
      timings.push(await explain(dataSource, query, filter, (name) => parents.get(name) ?? name));
    }
    process.stdout.write(`${JSON.stringify({ rows, accounts: ACCOUNTS, months: MONTHS, timings }, null, 2)}\n`);
  } finally {
    await dataSource.destroy();
    if (!keep) {
      await admin(serverUrl, `DROP DATABASE IF EXISTS "${database}"`);
    }
  }
}

/** Each filter alone, with a time range, and the combinations support reaches for. */
function filters(rows: number): Record<string, RequestLogFilter> {
  const hour = 3_600_000;
  const now = Date.now();
  const monthAgo = new Date(now - 30 * 24 * hour);
  const day = { from: monthAgo, to: new Date(monthAgo.getTime() + 24 * hour) };
  // Replaced by the first account's id when run.
  const account = 'first';
  const g = rows - 1000;
  return {
    'newest first, no filter': {},
    'last hour': { from: new Date(now - hour) },
    'request id': { requestId: `req-${Math.floor(rows / 2)}` },
    'client request id': { clientRequestId: `client-${g}` },
    account: { accountId: account },
    key: { keyId: '' },
    model: { model: 'model-7' },
    channel: { channel: 'channel-3' },
    'status upstream_broken': { status: 'upstream_broken' },
    'model, one day a month ago': { model: 'model-7', ...day },
    'channel, one day a month ago': { channel: 'channel-3', ...day },
    'status upstream_broken, one day a month ago': { status: 'upstream_broken', ...day },
    'account, one day a month ago': { accountId: account, ...day },
    'account and status upstream_broken': { accountId: account, status: 'upstream_broken' },
    'channel and status upstream_broken': { channel: 'channel-7', status: 'upstream_broken' },
  };
}

async function explain(
  dataSource: DataSource,
  query: string,
  filter: RequestLogFilter,
  /** A partition's index as the index of the partitioned table that made it. */
  parentOf: (index: string) => string,
): Promise<Timing> {
  if (filter.keyId === '') {
    const [key] = await dataSource.query<{ id: string }[]>('SELECT id FROM api_keys ORDER BY id LIMIT 1');
    filter.keyId = key.id;
  }
  if (filter.accountId === 'first') {
    const [row] = await dataSource.query<{ id: string }[]>('SELECT id FROM accounts ORDER BY id LIMIT 1');
    filter.accountId = row.id;
  }
  const plans: Record<string, unknown>[] = [];
  const explaining = new Proxy(dataSource, {
    get(target, property, receiver) {
      if (property !== 'query') {
        return Reflect.get(target, property, receiver) as unknown;
      }
      return async (sql: string, params?: unknown[]) => {
        const [row] = await target.query<{ 'QUERY PLAN': Record<string, unknown>[] }[]>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
          params,
        );
        plans.push(row['QUERY PLAN'][0]);
        return [];
      };
    },
  });
  const repository = new RequestLogRepository(explaining);
  // A cold first run, then three: the figures are the four execution times.
  for (let run = 0; run < 4; run++) {
    await repository.page(filter, null, PAGE);
  }
  const indexes = new Set<string>();
  let returned = 0;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
    } else if (node && typeof node === 'object') {
      const name = (node as Record<string, unknown>)['Index Name'];
      if (typeof name === 'string') {
        indexes.add(parentOf(name));
      }
      Object.values(node).forEach(visit);
    }
  };
  visit(plans[plans.length - 1]);
  returned = Number((plans[plans.length - 1].Plan as Record<string, unknown>)['Actual Rows']);
  return {
    query,
    rows: returned,
    executionMs: plans.map((plan) => Math.round(Number(plan['Execution Time']) * 100) / 100),
    indexes: [...indexes].sort(),
  };
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

const args = process.argv.slice(2);
const rowsAt = args.indexOf('--rows');
const rows = rowsAt >= 0 ? Number(args[rowsAt + 1]) : 10_000_000;
if (!Number.isInteger(rows) || rows < 1_000) {
  process.stderr.write('usage: time-request-log.ts [--rows N (at least 1000)] [--keep]\n');
  process.exit(2);
}
main(rows, args.includes('--keep')).catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
