import Redis from 'ioredis';
import { Client } from 'pg';

export default async function globalTeardown(): Promise<void> {
  const database = process.env.TEST_DATABASE_NAME;
  if (database?.includes('test')) {
    const admin = new Client({ connectionString: process.env.DATABASE_URL!.replace(/\/[^/]*$/, '/postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }
  if (process.env.REDIS_URL) {
    const redis = new Redis(process.env.REDIS_URL);
    await redis.flushdb();
    await redis.quit();
  }
}
