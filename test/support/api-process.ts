import 'reflect-metadata';
import pino from 'pino';
import { createApiApp } from 'src/app.factory';
import { loadConfig } from 'src/config/app-config';

/**
 * The API as main.ts builds it, in a process of its own that a test can SIGKILL, listening on
 * 127.0.0.1 only, on a free port it prints once it accepts requests.
 */
async function main(): Promise<void> {
  const app = await createApiApp(loadConfig(), pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }));
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  process.stdout.write(`api listening on ${port}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`api failed to start: ${error.message}\n`);
  process.exit(1);
});
