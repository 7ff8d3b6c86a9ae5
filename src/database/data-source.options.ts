import { join } from 'node:path';
import { AppConfig } from 'src/config/app-config';
import { entities } from 'src/database/entities';
import { DataSourceOptions } from 'typeorm';

// Compiled, migrations live in dist/migrations/*.js; under ts-node/jest they are the sources in migrations/*.ts.
const migrations = __filename.endsWith('.ts')
  ? [join(__dirname, '..', '..', 'migrations', '*.ts')]
  : [join(__dirname, '..', 'migrations', '*.js')];

export function dataSourceOptions(config: Pick<AppConfig, 'databaseUrl'>): DataSourceOptions {
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
    extra: { max: 20 },
  };
}
