import { FastifyInstance, FastifyRequest } from 'fastify';
import { IncomingMessage } from 'node:http';
import { startSpan, TraceSpan, tracingOn } from 'src/common/telemetry/tracing';

/** Each /v1 request's span, for what runs inside it (the admission, the upstream attempts). */
const spans = new WeakMap<IncomingMessage, TraceSpan>();

/**
 * A root span for every /v1 request (`POST /v1/chat/completions`), the child of the caller's span
 * when it sent a valid W3C `traceparent`. It opens before the API key is checked and ends when the
 * response closes, however it ends: answered, refused, streamed to its end, or cut by the client.
 * With tracing off nothing is registered: the requests pay nothing.
 */
export function traceApiRequests(fastify: FastifyInstance): void {
  if (!tracingOn()) {
    return;
  }
  fastify.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url ?? (request.url.startsWith('/v1/') ? '/v1/*' : undefined);
    if (route === undefined || !route.startsWith('/v1/')) {
      return done();
    }
    const span = startSpan(
      `${request.method} ${route}`,
      { 'http.request.method': request.method, 'http.route': route, 'gateway.request_id': request.id },
      'server',
      request.headers.traceparent,
    );
    if (span === null) {
      return done();
    }
    spans.set(request.raw, span);
    const raw = reply.raw;
    raw.on('close', () => {
      span.set({ 'http.response.status_code': raw.statusCode });
      if (!raw.writableFinished) {
        span.fail('client_closed');
      } else if (raw.statusCode >= 500) {
        span.fail(String(raw.statusCode));
      }
      span.end();
    });
    done();
  });
}

/** The request's span, or null (tracing off, or not a /v1 request). */
export function requestSpanOf(request: FastifyRequest): TraceSpan | null {
  return tracingOn() ? (spans.get(request.raw) ?? null) : null;
}
