import migrations from 'src/database/data-source';

describe("the migrations' DataSource", () => {
  beforeAll(() => migrations.initialize());
  afterAll(() => migrations.destroy());

  it('should bound how long a migration waits for a lock and how long any statement runs', async () => {
    const [lock] = await migrations.query<{ lock_timeout: string }[]>('SHOW lock_timeout');
    const [statement] = await migrations.query<{ statement_timeout: string }[]>('SHOW statement_timeout');

    expect({ lock: lock.lock_timeout, statement: statement.statement_timeout }).toEqual({
      lock: '5s',
      statement: '10min',
    });
  });
});
