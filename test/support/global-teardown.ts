import Redis from 'ioredis';
import { Client } from 'pg';
import { ENTRYPOINTS_VARIABLE, removeEntrypoints } from 'test/support/entrypoint-build';
import { testDatabaseName, withDatabase } from 'test/support/test-database';

export default async function globalTeardown(): Promise<void> {
  removeEntrypoints(process.env[ENTRYPOINTS_VARIABLE]);
  // Dropped from the server's maintenance database; never one whose name lacks "test".
  const database = testDatabaseName(process.env.DATABASE_URL);
  const admin = new Client({ connectionString: withDatabase(process.env.DATABASE_URL!, 'postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.end();
  // A cluster of the run's own is stopped whole by its teardown (cluster-global-teardown.ts).
  if (process.env.REDIS_URL && !process.env.TEST_REDIS_CLUSTER_URL) {
    const redis = new Redis(process.env.REDIS_URL);
    await redis.flushdb();
    await redis.quit();
  }
}
