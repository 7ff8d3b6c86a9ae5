import Redis from 'ioredis';
import { Client } from 'pg';
import { ENTRYPOINTS_VARIABLE, removeEntrypoints } from 'test/support/entrypoint-build';
import { testDatabaseName, withDatabase } from 'test/support/test-database';
import { allWorkerResources } from 'test/support/test-worker-resources';

export default async function globalTeardown(): Promise<void> {
  removeEntrypoints(process.env[ENTRYPOINTS_VARIABLE]);
  const { databases, redis } = allWorkerResources();
  // Dropped from the server's maintenance database; never one whose name lacks "test".
  const names = databases.map((url, worker) => testDatabaseName(url, `the database of worker ${worker + 1}`));
  const admin = new Client({ connectionString: withDatabase(process.env.DATABASE_URL!, 'postgres') });
  await admin.connect();
  try {
    for (const name of names) {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
  // A cluster of the run's own is stopped whole by its teardown (cluster-global-teardown.ts).
  if (!process.env.TEST_REDIS_CLUSTER_URL) {
    for (const url of redis) {
      const client = new Redis(url);
      await client.flushdb();
      await client.quit();
    }
  }
}
