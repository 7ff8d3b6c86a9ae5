import 'tsconfig-paths/register';
import 'reflect-metadata';
import Redis from 'ioredis';
import { Client } from 'pg';
import { dataSourceOptions } from 'src/database/data-source.options';
import { buildEntrypoints, ENTRYPOINTS_VARIABLE } from 'test/support/entrypoint-build';
import { withDatabase } from 'test/support/test-database';
import { WORKER_DATABASES_VARIABLE, WORKER_REDIS_VARIABLE } from 'test/support/test-worker-resources';
import { DataSource } from 'typeorm';

const SERVER_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_BASE = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Each run gets fresh databases, migrated with the real migrations, and empty Redis db indexes, or,
 * in the cluster project, the Redis Cluster its setup started for it (TEST_REDIS_CLUSTER_URL;
 * cluster-global-setup.ts). Test files refuse a DATABASE_URL whose database name lacks "test"
 * (test-database.guard.ts).
 *
 * Jest runs test files in `maxWorkers` processes at once: each worker gets a database and a Redis db
 * of its own (test-worker-resources.ts picks them by JEST_WORKER_ID), so files running side by side
 * never see each other's rows, counters or queues. The first database is migrated, the others are
 * copies of it (`CREATE DATABASE … TEMPLATE`, a file copy: a fraction of a second each). A cluster has
 * only db 0, so its run stays one worker.
 */
export default async function globalSetup(globalConfig?: { maxWorkers?: number }): Promise<void> {
  const workers = process.env.TEST_REDIS_CLUSTER_URL ? 1 : Math.max(1, globalConfig?.maxWorkers ?? 1);
  const database = `gateway_test_${Date.now()}_${process.pid}`;
  // The entrypoints the tests spawn, compiled while the database is created and migrated.
  const entrypoints = buildEntrypoints();
  // Its failure is thrown where it is awaited, below, not as an unhandled rejection meanwhile.
  entrypoints.catch(() => undefined);
  const admin = new Client({ connectionString: SERVER_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${database}"`);
    const databaseUrl = withDatabase(SERVER_URL, database);
    const dataSource = new DataSource(dataSourceOptions({ databaseUrl }));
    await dataSource.initialize();
    await dataSource.runMigrations();
    await dataSource.destroy();
    const databases = [database];
    for (let worker = 2; worker <= workers; worker++) {
      const copy = `${database}_w${worker}`;
      await admin.query(`CREATE DATABASE "${copy}" TEMPLATE "${database}"`);
      databases.push(copy);
    }
    process.env[WORKER_DATABASES_VARIABLE] = databases.map((name) => withDatabase(SERVER_URL, name)).join(' ');
  } finally {
    await admin.end();
  }

  const redisUrls = process.env.TEST_REDIS_CLUSTER_URL ? [process.env.TEST_REDIS_CLUSTER_URL] : [];
  while (redisUrls.length < workers) {
    redisUrls.push(`${REDIS_BASE}/${await claimEmptyRedisDb()}`);
  }
  process.env[WORKER_REDIS_VARIABLE] = redisUrls.join(' ');

  process.env[ENTRYPOINTS_VARIABLE] = await entrypoints;
  process.env.NODE_ENV = 'test';
  // The first worker's (and the only one's, in a run in band); each test file gets its worker's.
  process.env.DATABASE_URL = process.env[WORKER_DATABASES_VARIABLE].split(' ')[0];
  process.env.REDIS_URL = redisUrls[0];
  process.env.ADMIN_TOKEN = 'test-admin-token-0123456789';
  // Every test registers its customers from 127.0.0.1; the files that test the sign-in throttles set their own limits.
  process.env.AUTH_ATTEMPTS_PER_IP ??= '1000000';
  process.env.AUTH_FAILURES_PER_IP ??= '1000000';
  // Most tests register customers and create keys at once; the files about verification turn it on.
  process.env.REQUIRE_EMAIL_VERIFICATION ??= 'false';
  // Most tests sign customers up (hundreds a run): scrypt at N = 2^10 (1 MiB, ~2 ms a hash) instead of
  // production's 2^15 (32 MiB, ~70 ms of a core). The files about hashing under a flood set 15.
  process.env.PASSWORD_HASH_COST ??= '10';
}

/** Concurrent runs (and workers) on one machine must not share rate-limit counters or queues. */
export async function claimEmptyRedisDb(): Promise<number> {
  for (let db = 1; db < 16; db++) {
    const redis = new Redis(`${REDIS_BASE}/${db}`);
    const claimed = await redis.set('gateway:test-run', String(process.pid), 'EX', 3600, 'NX');
    const keys = await redis.dbsize();
    await redis.quit();
    if (claimed === 'OK' && keys === 1) {
      return db;
    }
  }
  throw new Error('no free Redis db index (1-15) for this test run');
}
