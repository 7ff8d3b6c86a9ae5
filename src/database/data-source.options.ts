import { join } from 'node:path';
import { AppConfig } from 'src/config/app-config';
import { DEFAULT_DATABASE_POOL } from 'src/config/database-config';
import { entities } from 'src/database/entities';
import { DataSourceOptions } from 'typeorm';

// Compiled, migrations live in dist/migrations/*.js; under ts-node/jest they are the sources in migrations/*.ts.
const migrations = __filename.endsWith('.ts')
  ? [join(__dirname, '..', '..', 'migrations', '*.ts')]
  : [join(__dirname, '..', 'migrations', '*.js')];

/** `database` defaults to the defaults of DATABASE_POOL_MAX and the other DATABASE_* variables. */
export function dataSourceOptions(
  config: Pick<AppConfig, 'databaseUrl'> & Partial<Pick<AppConfig, 'database'>>,
): DataSourceOptions {
  const pool = config.database ?? DEFAULT_DATABASE_POOL;
  return {
    type: 'postgres',
    url: config.databaseUrl,
    entities,
    migrations,
    migrationsTableName: 'migrations',
    // gen_random_uuid() is built into Postgres 13+, so no extension has to be installed.
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    synchronize: false,
    migrationsRun: false,
    // node-postgres's pool. statement_timeout is a startup parameter of each connection, so no
    // session SET exists for a transaction-mode pooler to carry over to another client
    // (docs/operations.md, "PgBouncer"); 0 sends none.
    extra: {
      max: pool.poolMax,
      statement_timeout: pool.statementTimeoutMs,
      connectionTimeoutMillis: pool.connectTimeoutMs,
      idleTimeoutMillis: pool.idleTimeoutMs,
    },
  };
}
