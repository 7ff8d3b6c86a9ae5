import { join } from 'node:path';
import { AppConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { DataSourceOptions } from 'typeorm';

/**
 * The product build that the tools start and migrate: `npm run build` puts the API, the worker and
 * the compiled migrations in dist/. Compiled, this file is dist-tools/tools/product-dist.js.
 */
export const PRODUCT_DIST = join(__dirname, '..', '..', 'dist');

/**
 * The product's data source options, with the product's migrations: the tools' own compiled copy of
 * src/database/data-source.options looks for them next to itself, in dist-tools/, where there are none.
 */
export function productDataSourceOptions(config: Pick<AppConfig, 'databaseUrl'>): DataSourceOptions {
  return { ...dataSourceOptions(config), migrations: [join(PRODUCT_DIST, 'migrations', '*.js')] };
}
