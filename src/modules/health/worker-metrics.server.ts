import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import { once } from 'node:events';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metricsRegistry } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';

/**
 * The worker's own `/metrics` (and a `/health` for probes) on WORKER_METRICS_PORT, when set: what only
 * the worker counts (payments confirmed and expired, their latency) is otherwise never scraped. Not a
 * public API: bind it to a private network.
 */
@Injectable()
export class WorkerMetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.workerMetricsPort;
    if (port === null) {
      return;
    }
    this.server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (request.method === 'GET' && path === '/metrics') {
        metricsRegistry.metrics().then(
          (text) => response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(text),
          () => response.writeHead(500).end(),
        );
        return;
      }
      if (request.method === 'GET' && path === '/health') {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
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
