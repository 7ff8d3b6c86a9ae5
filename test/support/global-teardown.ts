import Redis from 'ioredis';
import { Client } from 'pg';
import { testDatabaseName, withDatabase } from 'test/support/test-database';

export default async function globalTeardown(): Promise<void> {
  // Dropped from the server's maintenance database; never one whose name lacks "test".
  const database = testDatabaseName(process.env.DATABASE_URL);
  const admin = new Client({ connectionString: withDatabase(process.env.DATABASE_URL!, 'postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.end();
  if (process.env.REDIS_URL) {
    const redis = new Redis(process.env.REDIS_URL);
    await redis.flushdb();
    await redis.quit();
  }
}
