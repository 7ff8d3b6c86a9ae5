import 'reflect-metadata';
import { loadDatabaseConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { DataSource } from 'typeorm';

/** The DataSource of the TypeORM CLI (`npm run migration:*`). */
export default new DataSource(dataSourceOptions(loadDatabaseConfig()));
