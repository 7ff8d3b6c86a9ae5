import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { createApiApp } from 'src/app.factory';
import { loadConfig } from 'src/config/app-config';
import { buildOpenApiDocument } from 'src/openapi';

/** Writes openapi.json from the module graph alone: preview mode instantiates nothing, so no Postgres or Redis. */
async function main(): Promise<void> {
  const config = loadConfig({ NODE_ENV: 'development' });
  const app = await createApiApp(config, pino({ level: 'silent' }), { preview: true });
  const document = buildOpenApiDocument(app);
  writeFileSync(join(__dirname, '..', '..', 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
  await app.close();
}

void main();
