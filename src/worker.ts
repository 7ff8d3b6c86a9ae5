import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { createLogger, PinoNestLogger } from 'src/common/logging/logger';
import { AppConfig, ConfigError, loadConfig } from 'src/config/app-config';
import { WorkerModule } from 'src/worker.module';

function main(): void {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  }
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
