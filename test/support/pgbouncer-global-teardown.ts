import 'tsconfig-paths/register';
import globalTeardown from 'test/support/global-teardown';
import { LocalPgBouncer } from 'test/support/pgbouncer';
import { WORKER_DATABASES_VARIABLE } from 'test/support/test-worker-resources';

/** PgBouncer stops first, then the usual teardown drops the run's database directly. */
export default async function pgbouncerGlobalTeardown(): Promise<void> {
  try {
    await (globalThis as { gatewayTestPgBouncer?: LocalPgBouncer }).gatewayTestPgBouncer?.stop();
  } finally {
    if (process.env.TEST_DIRECT_DATABASE_URL) {
      process.env.DATABASE_URL = process.env.TEST_DIRECT_DATABASE_URL;
      process.env[WORKER_DATABASES_VARIABLE] = process.env.TEST_DIRECT_DATABASE_URL;
    }
    await globalTeardown();
  }
}
