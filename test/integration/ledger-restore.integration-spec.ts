import pino from 'pino';
import { Client } from 'pg';
import { createRedis, RedisClient } from 'src/common/redis/redis-client';
import { dataSourceOptions } from 'src/database/data-source.options';
import { endBalanceEpochs } from 'src/modules/ledger/balance-epochs';
import { BalanceGateService, HoldKey } from 'src/modules/ledger/balance-gate.service';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { OwnRedis } from 'test/e2e/outage-helpers';
import { newReference, TestDb } from 'test/integration/integration-helpers';
import { withDatabase } from 'test/support/test-database';
import { DataSource } from 'typeorm';

const USD = 1_000_000_000n;
const KEY: HoldKey = { id: '00000000-0000-4000-8000-000000000001', spendLimit: null };
const run = `${Date.now()}_${process.pid}`;
/** The databases this test makes on the run's server: the live one, its snapshot (a "backup"), the restored copy. */
const names = {
  live: `gateway_test_live_${run}`,
  snapshot: `gateway_test_snap_${run}`,
  restored: `gateway_test_rest_${run}`,
};
const urlOf = (database: string) => withDatabase(process.env.DATABASE_URL!, database);

async function onServer(sql: string): Promise<void> {
  const admin = new Client({ connectionString: urlOf('postgres') });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A fresh database migrated with the real migrations, as production's. */
async function migratedDatabase(name: string): Promise<void> {
  await onServer(`CREATE DATABASE "${name}"`);
  const dataSource = new DataSource(dataSourceOptions({ databaseUrl: urlOf(name) }));
  await dataSource.initialize();
  await dataSource.runMigrations();
  await dataSource.destroy();
}

describe('restoring Postgres to an earlier point, then ledger:resync', () => {
  let server: OwnRedis;
  let redis: RedisClient;
  let gate: BalanceGateService;

  beforeAll(async () => {
    server = await OwnRedis.start(['--save', '', '--appendonly', 'no']);
    redis = createRedis({ kind: 'single', url: server.url });
    gate = new BalanceGateService(redis, pino({ level: 'silent' }));
    await migratedDatabase(names.live);
  }, 60_000);
  afterAll(async () => {
    redis.disconnect();
    await server.close();
    for (const name of Object.values(names)) {
      await onServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  });

  /** Admission as the API does it (AdmissionGate.hold): load the balance from `db` when Redis asks for it. */
  async function admit(db: TestDb, accountId: string, amount: bigint) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await gate.hold(accountId, newReference('req'), amount, KEY);
      if (result.outcome !== 'unknown') {
        return result;
      }
      await gate.sync(accountId, await db.balanceOf(accountId));
    }
    throw new Error('the snapshot did not load');
  }

  /** A settled spend: the ledger's debit, and the new balance pushed to Redis as settlement does. */
  async function spend(db: TestDb, accountId: string, amount: bigint): Promise<void> {
    const posted = await db.ledger.post({ accountId, kind: 'adjustment', amount: -amount, reference: newReference() });
    expect(posted.outcome).toBe('applied');
    await gate.sync(accountId, await db.balanceOf(accountId));
  }

  it('should admit against the restored balances and leave the books clean', async () => {
    let live = await TestDb.open(urlOf(names.live));
    const account = await live.newAccount({ balance: 10n * USD });
    await spend(live, account, 1n * USD);
    expect(await admit(live, account, 1n)).toEqual({ outcome: 'held' });
    // The backup: a copy of the database as it was with $9 left.
    await live.close();
    await onServer(`CREATE DATABASE "${names.snapshot}" TEMPLATE "${names.live}"`);
    live = await TestDb.open(urlOf(names.live));
    // Spending after the backup, which the restore will undo: Redis now says $5.
    await spend(live, account, 4n * USD);
    await live.close();

    await onServer(`CREATE DATABASE "${names.restored}" TEMPLATE "${names.snapshot}"`);
    const restored = await TestDb.open(urlOf(names.restored));
    try {
      expect((await restored.balanceOf(account)).balance).toBe(9n * USD);
      // Before the resync Redis trusts its newer snapshot: $7 is refused although Postgres has $9.
      await gate.sync(account, await restored.balanceOf(account));
      expect((await admit(restored, account, 7n * USD)).outcome).toBe('insufficient');

      expect(await endBalanceEpochs(redis)).toBe(1);

      // The restored $9, less the hold still open from before (1 nano-dollar).
      expect(await admit(restored, account, 7n * USD)).toEqual({ outcome: 'held' });
      expect(await admit(restored, account, 2n * USD)).toEqual({ outcome: 'insufficient', available: 2n * USD - 1n });
      expect(await findLedgerMismatches(restored.dataSource)).toEqual([]);
    } finally {
      await restored.close();
    }
  }, 60_000);
});
