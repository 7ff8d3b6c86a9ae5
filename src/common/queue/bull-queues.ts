import { BullModule } from '@nestjs/bullmq';
import { DynamicModule } from '@nestjs/common';
import { Queue, Worker } from 'bullmq';
import pino, { Logger } from 'pino';
import { workerMetrics } from 'src/common/metrics/worker-metrics';
import { QueueName } from 'src/common/queue/queue.constants';
import { logRedisErrors } from 'src/common/redis/redis-error-log';

// BullMQ's classes are chosen when a queue is registered, before the process's logger exists; the
// listeners read it when a queue or worker is built, which happens after CoreModule.forRoot set it.
let queueLogger: Logger = pino();

/** Called by CoreModule.forRoot: queues and workers built from now on log to `logger`. */
export function logQueueErrorsTo(logger: Logger): void {
  queueLogger = logger;
}

class LoggedQueue extends Queue {
  constructor(...args: ConstructorParameters<typeof Queue>) {
    super(...args);
    logRedisErrors(this, queueLogger, `queue ${this.name}`);
  }
}

class LoggedWorker extends Worker {
  constructor(...args: ConstructorParameters<typeof Worker>) {
    super(...args);
    logRedisErrors(this, queueLogger, `worker ${this.name}`);
    // Every failed attempt of every queue the worker runs, counted where BullMQ reports it.
    this.on('failed', () => workerMetrics.jobFailures.inc({ queue: this.name }));
  }
}

/** BullModule.registerQueue, with the queue's (and its worker's) Redis errors logged as one line each. */
export function registerQueue(name: QueueName): DynamicModule {
  BullModule.queueClass = LoggedQueue;
  BullModule.workerClass = LoggedWorker;
  return BullModule.registerQueue({ name });
}
