import { Client } from 'pg';
import { withDatabase } from 'test/support/test-database';

/** The project's premise: every connection of the run goes through a PgBouncer in transaction mode. */
describe('the pgbouncer project', () => {
  it("should reach the run's database only through PgBouncer, pooling in transaction mode", async () => {
    const console = new Client({ connectionString: withDatabase(process.env.DATABASE_URL!, 'pgbouncer') });
    await console.connect();
    try {
      const config = await console.query<{ key: string; value: string }>('SHOW CONFIG');
      expect(config.rows.find((row) => row.key === 'pool_mode')?.value).toBe('transaction');
      const pools = await console.query<{ database: string }>('SHOW POOLS');
      const database = new URL(process.env.DATABASE_URL!).pathname.slice(1);
      expect(pools.rows.map((row) => row.database)).toContain(database);
    } finally {
      await console.end();
    }
  });
});
