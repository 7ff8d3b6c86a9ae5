import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import { AppConfig } from 'src/config/app-config';
import { jobLogFields } from 'src/common/logging/job-context';

/**
 * One pino logger per process. Request and response bodies and keys are never passed to it; the
 * redaction paths are a second line of defence against a header object being logged by mistake.
 */
export function createLogger(
  config: Pick<AppConfig, 'logLevel'>,
  service: string,
  options: { runsJobs?: boolean } = {},
): Logger {
  return pino({
    level: config.logLevel,
    base: { service },
    // The worker: the running job's name and id on each line written during it (job-context.ts).
    mixin: options.runsJobs ? jobLogFields : undefined,
    redact: { paths: ['*.authorization', '*.headers.authorization', '*.apiKey', '*.password'], censor: '[redacted]' },
  });
}

/**
 * Routes Nest's own log calls into pino. Nest's `log` level is its start-up narration (a line per
 * module and per route, ~90 lines): debug here, so that at the default level a process starts with
 * its own one line. Warnings and errors keep their levels; LOG_LEVEL=debug shows the narration.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }

  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }

  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }

  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }

  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}

export const LOGGER = Symbol('LOGGER');

/**
 * Where a service's lines go when it works for a request: the request's RequestTrace, whose logger
 * stamps its reqId and is made only when a line is written. Read `log` only to write a line.
 */
export interface LogTarget {
  readonly log: Logger;
}
