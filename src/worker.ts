// First: nothing may load Nest before this module does (see there).
import 'src/common/logging/nest-logger-date-format';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { createLogger, PinoNestLogger } from 'src/common/logging/logger';
import { startTracing } from 'src/common/telemetry/tracing';
import { loadConfigOrExit } from 'src/config/app-config';
import { WorkerModule } from 'src/worker.module';

function main(): void {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'worker', { runsJobs: true });
  startTracing(config.tracing, 'llm-gateway-worker', logger)
    .then(() =>
      NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger), {
        logger: new PinoNestLogger(logger),
      }),
    )
    .then((app) => {
      // Nest closes the queues on SIGTERM, letting running jobs finish before the process exits. Then it
      // exits 0, like the API, instead of re-raising the signal: as PID 1 of a container a re-raised
      // SIGTERM is ignored, and the process would end only if nothing at all were left on its event loop.
      app.enableShutdownHooks([], { useProcessExit: true });
    })
    .catch((error: Error) => {
      logger.fatal({ err: error }, 'worker failed to start');
      process.exit(1);
    });
}

main();
