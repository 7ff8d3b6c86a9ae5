import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { createApiApp } from 'src/app.factory';
import { loadConfig } from 'src/config/app-config';
import { dataSourceOptions } from 'src/database/data-source.options';
import { buildOpenApiDocument } from 'src/openapi';
import { DataSource } from 'typeorm';

describe('generated artifacts', () => {
  it('should have migrations that match the entities exactly (no schema drift)', async () => {
    const dataSource = new DataSource(dataSourceOptions({ databaseUrl: process.env.DATABASE_URL! }));
    await dataSource.initialize();
    try {
      const pending = await dataSource.driver.createSchemaBuilder().log();
      // Anything listed here means an entity changed without a migration: run `npm run migration:generate`.
      expect(pending.upQueries.map((query) => query.query)).toEqual([]);
    } finally {
      await dataSource.destroy();
    }
  });

  it('should have a committed openapi.json that matches the code (run `npm run openapi`)', async () => {
    const app = await createApiApp(loadConfig({ NODE_ENV: 'development' }), pino({ level: 'silent' }), {
      preview: true,
    });
    const generated = buildOpenApiDocument(app);
    await app.close();
    const committed: unknown = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(generated)));
  });
});
