import 'tsconfig-paths/register';
import { Client } from 'pg';
import globalSetup from 'test/support/global-setup';
import { LocalPgBouncer, startPgBouncer } from 'test/support/pgbouncer';
import { testDatabaseName } from 'test/support/test-database';
import { WORKER_DATABASES_VARIABLE } from 'test/support/test-worker-resources';

/** What production sets on the gateway's role or database behind PgBouncer (docs/operations.md). */
const STATEMENT_TIMEOUT_MS = 30_000;

/**
 * The pgbouncer project's setup: the usual one (a fresh database, migrated directly, as the migrate
 * Job connects), then a PgBouncer of the run's own in transaction mode, and DATABASE_URL pointed
 * through it, so the tests and the API and worker processes they start reach Postgres only through it.
 */
export default async function pgbouncerGlobalSetup(): Promise<void> {
  await globalSetup();
  const directUrl = process.env.DATABASE_URL!;
  const admin = new Client({ connectionString: directUrl });
  await admin.connect();
  try {
    await admin.query(
      `ALTER DATABASE "${testDatabaseName(directUrl)}" SET statement_timeout = ${STATEMENT_TIMEOUT_MS}`,
    );
  } finally {
    await admin.end();
  }
  const pgbouncer = await startPgBouncer(directUrl);
  // For the teardown: Jest runs both in its parent process.
  (globalThis as { gatewayTestPgBouncer?: LocalPgBouncer }).gatewayTestPgBouncer = pgbouncer;
  process.env.TEST_DIRECT_DATABASE_URL = directUrl;
  process.env.DATABASE_URL = pgbouncer.urlFor(directUrl);
  // The run is one worker (its setup was called without Jest's configuration): its one database, through PgBouncer.
  process.env[WORKER_DATABASES_VARIABLE] = process.env.DATABASE_URL;
}
