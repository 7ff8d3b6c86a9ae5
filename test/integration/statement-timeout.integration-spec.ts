import { withStatementTimeout } from 'src/common/database/statement-timeout';
import { TestDb } from 'test/integration/integration-helpers';

/**
 * DATABASE_STATEMENT_TIMEOUT_MS bounds every statement, and the few that may run longer lift it for
 * their own transaction only. Run through PgBouncer too (the pgbouncer project), where the bound is the
 * database's own setting and a leaked session SET would reach the next client of the server connection.
 */
describe('statement timeouts', () => {
  let db: TestDb;

  beforeAll(async () => {
    db = await TestDb.open();
  });

  afterAll(async () => {
    await db.close();
  });

  const statementTimeout = async () =>
    (await db.dataSource.query<{ statement_timeout: string }[]>('SHOW statement_timeout'))[0].statement_timeout;

  it('should bound every statement by 30 s by default', async () => {
    expect(await statementTimeout()).toBe('30s');
  });

  it("should cancel a statement past its transaction's own bound, and leave the others' bound as it was", async () => {
    await expect(
      withStatementTimeout(db.dataSource, 100, (manager) => manager.query('SELECT pg_sleep(5)')),
    ).rejects.toThrow(/statement timeout/);
    expect(await withStatementTimeout(db.dataSource, 0, (manager) => manager.query('SHOW statement_timeout'))).toEqual([
      { statement_timeout: '0' },
    ]);

    const after = await Promise.all(Array.from({ length: 10 }, () => statementTimeout()));
    expect(new Set(after)).toEqual(new Set(['30s']));
  });
});
