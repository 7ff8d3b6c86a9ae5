import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import { once } from 'node:events';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { workerScrapeRegistry } from 'src/common/metrics/worker-metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { DependencyProbe } from 'src/modules/health/dependency-probe';
import { WorkerGauges } from 'src/modules/health/worker-gauges';

/** The worker's routes; its Kubernetes probes name them too (test/deploy/kubernetes.spec.ts checks). */
export const WORKER_METRICS_PATH = '/metrics';
export const WORKER_HEALTH_PATH = '/health';
export const WORKER_READY_PATH = '/health/ready';

/** A scrape waits this long for the gauges read from Redis, well inside Prometheus's default 10 s timeout. */
const GAUGES_TIMEOUT_MS = 2_000;

/**
 * The worker's own `/metrics` (and a `/health` for probes) on WORKER_METRICS_PORT, when set: what only
 * the worker counts (settlement, job failures, the hold sweeper, payments confirmed) is otherwise never
 * scraped. Plain node:http, a handful of routes: nothing on the job path waits for it. Not a public
 * API: bind it to a private network. `/health` is liveness only (the event loop answers): a worker
 * waiting for Redis or Postgres to come back must not be restarted for it. `/health/ready` answers 503
 * while Redis does not answer (Postgres away alone keeps it ready, as for the API).
 */
@Injectable()
export class WorkerMetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly gauges: WorkerGauges,
    private readonly dependencies: DependencyProbe,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.workerMetricsPort;
    if (port === null) {
      return;
    }
    this.server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (request.method === 'GET' && path === WORKER_METRICS_PATH) {
        this.gauges
          .refresh(GAUGES_TIMEOUT_MS)
          .then(() => workerScrapeRegistry.metrics())
          .then(
            (text) => response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(text),
            () => response.writeHead(500).end(),
          );
        return;
      }
      if (request.method === 'GET' && path === WORKER_HEALTH_PATH) {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
        return;
      }
      if (request.method === 'GET' && path === WORKER_READY_PATH) {
        // Like the API's: Redis (the queues, the usage to settle) is what the worker cannot work without;
        // Postgres away only delays settlement, which resumes on its own.
        void this.dependencies.check().then(({ postgres, redis }) => {
          const checks = { postgres: postgres.up ? 'ok' : 'failed', redis: redis.up ? 'ok' : 'failed' };
          response
            .writeHead(redis.up ? 200 : 503, { 'content-type': 'application/json' })
            .end(JSON.stringify({ status: redis.up ? 'ok' : 'unavailable', checks }));
        });
        return;
      }
      response.writeHead(404).end();
    });
    this.server.listen(port);
    await once(this.server, 'listening');
    this.logger.info({ port }, 'worker metrics listening');
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise((resolve) => this.server!.close(resolve));
    }
  }
}
