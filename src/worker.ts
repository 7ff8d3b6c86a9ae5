import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { createLogger, PinoNestLogger } from 'src/common/logging/logger';
import { loadConfigOrExit } from 'src/config/app-config';
import { WorkerModule } from 'src/worker.module';

function main(): void {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'worker');
  NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger), { logger: new PinoNestLogger(logger) })
    .then((app) => {
      // Nest closes the queues on SIGTERM, letting running jobs finish before the process exits.
      app.enableShutdownHooks();
    })
    .catch((error: Error) => {
      logger.fatal({ err: error }, 'worker failed to start');
      process.exit(1);
    });
}

main();
