import { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { IncomingMessage } from 'node:http';
import { Logger } from 'pino';
import { AuthenticatedRequest } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { toApiError } from 'src/common/filters/all-exceptions.filter';
import { errorLogFields } from 'src/common/filters/error-log-fields';
import { bodyLimitFor, discardUnreadBody, SMALL_BODY_LIMIT_BYTES } from 'src/common/http/body-limits';
import { errorAnswer, presentedAuthorization } from 'src/common/http/wire-format';
import { clientRequestIdOf } from 'src/common/http/request-trace';
import { AppConfig } from 'src/config/app-config';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { AdminTokenMatcher } from 'src/modules/auth/admin-token-matcher';
import { throttleAddress } from 'src/common/http/client-address';
import { InFlightRequests } from 'src/modules/health/in-flight-requests';
import { ShutdownState } from 'src/modules/health/shutdown.state';

export interface EdgeServices {
  shutdown: ShutdownState;
  inFlight: InFlightRequests;
  apiKeys: ApiKeyAuthenticator;
}

const shuttingDown = () =>
  new ApiError(
    ErrorKind.Overloaded,
    'This server is shutting down. Retry: another server will answer.',
    null,
    undefined,
    {
      'retry-after': '1',
      connection: 'close',
    },
  );

/** Probes keep answering while draining: the balancer must see readiness fail, not a refusal. */
const isProbe = (url: string) => url.startsWith('/health/') || url.startsWith('/metrics');

/**
 * Whether the request was routed to the API-key surface. The router decodes the path, the URL is left
 * as sent: `/%761/chat/completions` reaches the /v1 route, so the matched route decides, not the URL.
 * A request no route matched falls back to its URL (an unknown /v1 path still needs a key).
 */
function isApiKeyRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.url ?? request.url).startsWith('/v1/');
}

/** An admin route that takes more than a small body (a price book): its token is checked before the body. */
function isLargeAdminBodyRoute(request: FastifyRequest): boolean {
  const { url, bodyLimit } = request.routeOptions;
  return (url ?? '').startsWith('/admin/') && (bodyLimit ?? 0) > SMALL_BODY_LIMIT_BYTES;
}

/** A body was announced and has not fully arrived yet. */
function bodyStillArriving(raw: IncomingMessage): boolean {
  const announced = raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;
  return announced && !raw.complete;
}

function answer(request: FastifyRequest, reply: FastifyReply, error: ApiError): void {
  const { status, body } = errorAnswer(request, error);
  void reply.code(status).headers(error.headers).send(body);
}

/**
 * What happens to a request before Nest sees it: per-route body limits, refusal while draining, the
 * API key checked before a /v1 body is read, early answers that still reach a client that is writing,
 * and the count of work in flight that shutdown waits for. `services` is called on the first request,
 * so the OpenAPI writer (no database, no requests) never builds them.
 */
export function registerEdgeHooks(
  fastify: FastifyInstance,
  config: AppConfig,
  logger: Logger,
  services: () => EdgeServices,
): void {
  let resolved: EdgeServices | undefined;
  const edge = () => (resolved ??= services());
  const adminTokens = new AdminTokenMatcher(config.adminTokens);

  fastify.addHook('onRoute', (route) => {
    route.bodyLimit ??= bodyLimitFor(route.url ?? '', config.bodyLimitBytes);
    route.handler = countHandler(route.handler, () => edge().inFlight);
  });

  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    // Ours names the request (and its bill); the client's own id, when valid, is answered beside it.
    const clientRequestId = clientRequestIdOf(request.headers);
    if (clientRequestId !== null) {
      void reply.header('x-client-request-id', clientRequestId);
    }
    const { shutdown, inFlight, apiKeys } = edge();
    // `on`, not `once`: a response closes once, and `once`'s per-call wrapper kept every request's
    // objects alive past two scavenges (docs/performance.md, "The request path's small costs").
    reply.raw.on('close', inFlight.enter());
    if (shutdown.draining && !isProbe(request.url)) {
      return answer(request, reply, shuttingDown());
    }
    // CONTRACT: /v1 is the API-key surface. Checking the key here, before the body is read, means a
    // bad key costs no body parsing; the guard then finds the principal and does not look it up again.
    if (isLargeAdminBodyRoute(request)) {
      // Megabytes of price book are read only for an operator: anyone else is answered from the headers.
      try {
        adminTokens.principalOf(request.headers.authorization);
      } catch (error) {
        return answer(request, reply, toApiError(error));
      }
      return done();
    }
    if (!isApiKeyRoute(request)) {
      return done();
    }
    apiKeys.authenticate(presentedAuthorization(request), throttleAddress(request.ip)).then(
      (principal) => {
        (request as AuthenticatedRequest).principal = principal;
        done();
      },
      (error: unknown) => {
        const refusal = toApiError(error);
        if (refusal.kind === ErrorKind.Internal) {
          // Only where it came from: a QueryFailedError carries the query and its parameters (the key hash).
          logger.error({ reqId: request.id, error: errorLogFields(error) }, 'api key lookup failed');
        }
        answer(request, reply, refusal);
      },
    );
  });

  fastify.addHook('onSend', (request, reply, payload, done) => {
    // Answered before the body arrived (413 from the Content-Length, 401, 503): keep the connection
    // open and swallow the rest of the body, so the client reads this answer instead of a reset.
    if (bodyStillArriving(request.raw)) {
      reply.removeHeader('connection');
      discardUnreadBody(request.raw, 2 * config.bodyLimitBytes);
    }
    done(null, payload);
  });
}

/** Counts a route handler as in flight until its promise settles (a cut stream records its usage after the socket closed). */
function countHandler(handler: RouteHandlerMethod, inFlight: () => InFlightRequests): RouteHandlerMethod {
  return function countedHandler(this: FastifyInstance, request, reply) {
    const leave = inFlight().enter();
    try {
      const result: unknown = handler.call(this, request, reply);
      if (result instanceof Promise) {
        return result.finally(leave);
      }
      leave();
      return result;
    } catch (error) {
      leave();
      throw error;
    }
  };
}
