import 'reflect-metadata';
import { Logger } from 'pino';
import { createApiApp } from 'src/app.factory';
import { createLogger } from 'src/common/logging/logger';
import { AppConfig, loadConfigOrExit } from 'src/config/app-config';
import { ShutdownState } from 'src/modules/health/shutdown.state';

async function bootstrap(config: AppConfig, logger: Logger): Promise<void> {
  const app = await createApiApp(config, logger);
  // Node's default accept backlog (511) overflows when a thousand clients connect at once; the kernel
  // caps this at net.core.somaxconn (4096 here), so raise that too on hosts that see such bursts.
  await app.listen({ port: config.port, host: '0.0.0.0', backlog: 4096 });
  logger.info({ port: config.port }, 'api listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      return;
    }
    stopping = true;
    // Readiness fails first; in-flight streams get the grace period to finish, then are cut.
    app.get(ShutdownState).draining = true;
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'draining');
    const force = setTimeout(() => app.getHttpServer().closeAllConnections(), config.shutdownGraceMs).unref();
    await app.close();
    clearTimeout(force);
    logger.info('api stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

function main(): void {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'api');
  bootstrap(config, logger).catch((error: Error) => {
    logger.fatal({ err: error }, 'api failed to start');
    process.exit(1);
  });
}

main();
