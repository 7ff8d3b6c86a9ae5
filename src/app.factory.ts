import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { randomUUID } from 'node:crypto';
import { Logger } from 'pino';
import { ApiModule } from 'src/api.module';
import { PinoNestLogger } from 'src/common/logging/logger';
import { AppConfig } from 'src/config/app-config';
import { buildOpenApiDocument } from 'src/openapi';

/**
 * Builds the HTTP API exactly as production runs it; main.ts, the e2e tests and the OpenAPI script
 * all go through here, so they cannot drift apart.
 */
export async function createApiApp(
  config: AppConfig,
  logger: Logger,
  options: { preview?: boolean } = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    genReqId: () => `req_${randomUUID().replace(/-/g, '')}`,
    requestIdHeader: false,
    forceCloseConnections: 'idle',
    keepAliveTimeout: 65_000,
  });
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forRoot(config, logger), adapter, {
    logger: new PinoNestLogger(logger),
    preview: options.preview,
    abortOnError: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  const httpLog = logger.child({ component: 'http' });

  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    // Method, path and status only: bodies, queries and headers may hold content or keys.
    const path = request.url.split('?')[0];
    const ms = Math.round(reply.elapsedTime);
    httpLog.info({ reqId: request.id, method: request.method, path, status: reply.statusCode, ms }, 'request');
    done();
  });

  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'docs-json' });
  return app;
}
