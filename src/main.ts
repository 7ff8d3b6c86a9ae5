// First: nothing may load Nest before this module does (see there).
import 'src/common/logging/nest-logger-date-format';
import 'reflect-metadata';
import { Logger } from 'pino';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApiApp } from 'src/app.factory';
import { createLogger } from 'src/common/logging/logger';
import { startTracing, stopTracing } from 'src/common/telemetry/tracing';
import { AppConfig, loadConfigOrExit } from 'src/config/app-config';
import { InFlightRequests } from 'src/modules/health/in-flight-requests';
import { ShutdownState } from 'src/modules/health/shutdown.state';

async function bootstrap(config: AppConfig, logger: Logger): Promise<void> {
  // First: the /v1 request spans are hooked in while the app is built, when tracing is on.
  await startTracing(config.tracing, 'llm-gateway-api', logger);
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
    try {
      await shutDown(app, config, logger, signal);
      process.exit(0);
    } catch (error) {
      logger.fatal({ err: error }, 'api did not stop cleanly');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

// A stream cut at the end of the grace period records what it delivered right after; this bounds that wait.
const CUT_SETTLE_MS = 2_000;
// Connections still open once the app closes (a client half-way through sending headers) are cut after this.
const CLOSE_CONNECTIONS_AFTER_MS = 1_000;

/**
 * Readiness fails and new requests get 503 at once; in-flight answers get the grace period, then are
 * cut; only when nothing is left in flight do the upstream pools, Redis and Postgres close (app.close()
 * runs them before it closes the HTTP server, so they must not close while requests still arrive).
 */
async function shutDown(app: NestFastifyApplication, config: AppConfig, logger: Logger, signal: string): Promise<void> {
  app.get(ShutdownState).draining = true;
  const inFlight = app.get(InFlightRequests);
  logger.info({ signal, graceMs: config.shutdownGraceMs, inFlight: inFlight.count }, 'draining');
  if (!(await inFlight.idle(config.shutdownGraceMs))) {
    logger.warn({ inFlight: inFlight.count }, 'grace period over: cutting the answers still in flight');
    app.getHttpServer().closeAllConnections();
    await inFlight.idle(CUT_SETTLE_MS);
  }
  const force = setTimeout(() => app.getHttpServer().closeAllConnections(), CLOSE_CONNECTIONS_AFTER_MS).unref();
  await app.close();
  clearTimeout(force);
  // The spans of the last requests are still buffered: sent before the process exits.
  await stopTracing();
  logger.info('api stopped');
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
