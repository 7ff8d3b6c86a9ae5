import 'reflect-metadata';
import { loadDatabaseConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { DataSource } from 'typeorm';

/**
 * Migrations run while the previous release still serves (docs/operations.md). A DDL statement waits
 * for its table's lock, and every query that comes after it queues behind it: without a bound, one
 * long transaction of the old release stalls all traffic on that table. So a migration gives up
 * after 5 s without its lock (run it again later), and any statement after 10 minutes.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 5_000;
export const MIGRATION_STATEMENT_TIMEOUT_MS = 10 * 60_000;

const options = dataSourceOptions(loadDatabaseConfig());

/** The DataSource of the TypeORM CLI (`npm run migration:*`, the Kubernetes migrate Job). */
export default new DataSource({
  ...options,
  extra: {
    ...(options.extra as object),
    lock_timeout: MIGRATION_LOCK_TIMEOUT_MS,
    statement_timeout: MIGRATION_STATEMENT_TIMEOUT_MS,
  },
});
