import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'pino';
import { ApiModule } from 'src/api.module';
import { ApiError } from 'src/common/errors/api-error';
import { corsSurfaces, registerCors } from 'src/common/http/cors';
import { SMALL_BODY_LIMIT_BYTES } from 'src/common/http/body-limits';
import { parseJsonBodies } from 'src/common/http/json-body';
import { newRequestId } from 'src/common/http/request-id';
import { directHandler } from 'src/direct-routes';
import { registerEdgeHooks } from 'src/edge-hooks';
import { PinoNestLogger } from 'src/common/logging/logger';
import { traceApiRequests } from 'src/common/telemetry/request-spans';
import { AppConfig } from 'src/config/app-config';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { InFlightRequests } from 'src/modules/health/in-flight-requests';
import { ShutdownState } from 'src/modules/health/shutdown.state';
import { keepWebhookBodies } from 'src/modules/payments/webhooks/webhook-bodies';
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
    // The default for routes registerEdgeHooks does not size (unknown paths); /v1 gets BODY_LIMIT_BYTES there.
    bodyLimit: SMALL_BODY_LIMIT_BYTES,
    genReqId: newRequestId,
    requestIdHeader: false,
    forceCloseConnections: 'idle',
    // While closing, Fastify's own 503 is not the error object; registerEdgeHooks refuses in it instead.
    return503OnClosing: false,
    keepAliveTimeout: 65_000,
    routerOptions: { maxParamLength: 512 },
    // No Nest middleware is used: without middie, no hook of its runs on every request.
    skipMiddie: true,
    // Off unless configured: otherwise any client could pick the address it is throttled under.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    // Errors Fastify raises before routing (a malformed URL) get our error shape too.
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => {
      const answer = ApiError.invalid(`Malformed request URL: ${error.message}`);
      void reply.code(answer.status).header('x-request-id', request.id).send(answer.toBody());
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forRoot(config, logger), adapter, {
    logger: new PinoNestLogger(logger),
    preview: options.preview,
    abortOnError: false,
    // Fastify's own JSON parser only: every endpoint takes JSON, so any other content type is a 400.
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeContentTypeParser('text/plain');
  parseJsonBodies(fastify);
  keepWebhookBodies(fastify);
  const httpLog = logger.child({ component: 'http' });
  // Before the edge hooks, so that what they count in flight is the handler that runs.
  fastify.addHook('onRoute', (route) => {
    route.handler = directHandler(route.method, route.url, route.handler, () => ({ app, logger }));
  });
  // First: a preflight is answered before the edge hooks would ask it for an API key.
  registerCors(fastify, corsSurfaces(config.cors.consoleOrigins, config.cors.v1Origins));
  // Before the edge hooks, so a request they refuse (a bad key, draining) has its span too; off, nothing is added.
  traceApiRequests(fastify);
  registerEdgeHooks(fastify, config, httpLog, () => ({
    shutdown: app.get(ShutdownState),
    inFlight: app.get(InFlightRequests),
    apiKeys: app.get(ApiKeyAuthenticator),
  }));
  fastify.addHook('onResponse', (request, reply, done) => {
    // Method, path and status only: bodies, queries and headers may hold content or keys.
    const path = request.url.split('?')[0];
    const ms = Math.round(reply.elapsedTime);
    httpLog.info({ reqId: request.id, method: request.method, path, status: reply.statusCode, ms }, 'request');
    done();
  });

  // The schema lists every admin route: not something to hand to the internet by default.
  if (config.docsEnabled) {
    SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'docs-json' });
  }
  return app;
}
