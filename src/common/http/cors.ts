import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CorsOrigins } from 'src/config/cors-origins';

/** One browser surface: which paths, which origins, and what its pages may send and read. */
export interface CorsSurface {
  matches(path: string): boolean;
  origins: CorsOrigins;
  /** Cookies or HTTP auth may come along (never with the '*' origin). */
  credentials: boolean;
  methods: string;
  /** Request headers a page may send; null: whatever the preflight asks for (the official SDKs send their own). */
  headers: string | null;
}

/** Response headers a page may read: the request ids, retry hints, rate limits and the CSV cursor. */
const EXPOSED_HEADERS = [
  'x-request-id',
  'x-client-request-id',
  'retry-after',
  'x-next-cursor',
  'x-ratelimit-limit-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-requests',
  'x-ratelimit-reset-tokens',
].join(', ');
const PREFLIGHT_MAX_AGE_SECONDS = '600';

export function corsSurfaces(consoleOrigins: CorsOrigins, v1Origins: CorsOrigins): CorsSurface[] {
  return [
    {
      // The console and its auth paths (/console/auth/*); never /admin or /webhooks.
      matches: (path) => path === '/console' || path.startsWith('/console/'),
      origins: consoleOrigins,
      credentials: true,
      methods: 'GET, POST, PATCH, PUT, DELETE',
      headers: 'Authorization, Content-Type, Idempotency-Key, Accept',
    },
    {
      matches: (path) => path === '/v1' || path.startsWith('/v1/'),
      origins: v1Origins,
      credentials: false,
      methods: 'GET, POST',
      headers: null,
    },
  ];
}

/** The CORS headers for a request, or null when its origin is not allowed on its path (no headers at all). */
export function corsHeadersFor(
  surfaces: CorsSurface[],
  request: { path: string; origin: string | undefined; preflight: boolean; requestedHeaders: string | undefined },
): Record<string, string> | null {
  const surface = surfaces.find((candidate) => candidate.matches(request.path));
  const origin = request.origin?.toLowerCase();
  if (!surface || !origin || !allows(surface.origins, origin)) {
    return null;
  }
  const headers: Record<string, string> = {
    'access-control-allow-origin': surface.origins === '*' ? '*' : (request.origin as string),
    vary: 'Origin',
  };
  if (surface.credentials) {
    headers['access-control-allow-credentials'] = 'true';
  }
  if (!request.preflight) {
    headers['access-control-expose-headers'] = EXPOSED_HEADERS;
    return headers;
  }
  headers['access-control-allow-methods'] = surface.methods;
  const allowedHeaders = surface.headers ?? request.requestedHeaders;
  if (allowedHeaders) {
    headers['access-control-allow-headers'] = allowedHeaders;
  }
  headers['access-control-max-age'] = PREFLIGHT_MAX_AGE_SECONDS;
  headers.vary = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';
  return headers;
}

function allows(origins: CorsOrigins, origin: string): boolean {
  return origins === '*' || origins.includes(origin);
}

const isPreflight = (request: FastifyRequest) =>
  request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;

/**
 * CORS before anything else: a preflight is answered here (204), before authentication and without
 * reading a body; an actual request gets its headers and goes on. An origin that is not allowed
 * gets no CORS headers, so the browser keeps the answer from the page.
 */
export function registerCors(fastify: FastifyInstance, surfaces: CorsSurface[]): void {
  if (surfaces.every((surface) => surface.origins !== '*' && surface.origins.length === 0)) {
    return;
  }
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    const preflight = isPreflight(request);
    const requestedHeaders = request.headers['access-control-request-headers'];
    const headers = corsHeadersFor(surfaces, {
      path: request.url.split('?')[0],
      origin: request.headers.origin,
      preflight,
      requestedHeaders: typeof requestedHeaders === 'string' ? requestedHeaders : undefined,
    });
    if (headers) {
      void reply.headers(headers);
    }
    if (preflight && surfaces.some((surface) => surface.matches(request.url.split('?')[0]))) {
      // Allowed or not, a preflight is answered here: the browser reads the headers, not the status.
      void reply.header('x-request-id', request.id).code(204).send();
      return;
    }
    done();
  });
}
