import { FastifyRequest } from 'fastify';
import { anthropicError } from 'src/common/errors/anthropic-error';
import { ApiError } from 'src/common/errors/api-error';

/**
 * The route-level marker of a route that speaks Anthropic's wire format (`@RouteConfig(ANTHROPIC_WIRE)`):
 * the edge hooks, the auth guard and the error filter read it, so its errors — even those raised before
 * the handler (bad key, body limit, rate limits) — come in Anthropic's shape, and `x-api-key` is a key.
 */
export const ANTHROPIC_WIRE = { wire: 'anthropic' } as const;

/** Anthropic's Messages API and every path under it: Anthropic's clients call them and read their errors. */
const ANTHROPIC_PATH = /^\/v1\/messages(?:[/?#]|$)/;

type RoutedRequest = Pick<FastifyRequest, 'headers'> & {
  url?: string;
  routeOptions?: { url?: string; config?: unknown };
};

/**
 * A route marked ANTHROPIC_WIRE, or a request no route matched under /v1/messages: an Anthropic client
 * that calls a path or method we lack (a newer endpoint, say) must still read our 404, and be let in with
 * its `x-api-key` to get it, rather than see a 401 for a header it was never told to send.
 */
export function speaksAnthropic(request: RoutedRequest): boolean {
  const config = request.routeOptions?.config as { wire?: string } | undefined;
  if (config?.wire === ANTHROPIC_WIRE.wire) {
    return true;
  }
  return request.routeOptions?.url === undefined && ANTHROPIC_PATH.test(request.url ?? '');
}

/** The Authorization header, or on an Anthropic route the `x-api-key` header as a Bearer one. */
export function presentedAuthorization(request: RoutedRequest): string | undefined {
  const authorization = request.headers.authorization;
  const apiKey = request.headers['x-api-key'];
  if (authorization === undefined && typeof apiKey === 'string' && speaksAnthropic(request)) {
    return `Bearer ${apiKey}`;
  }
  return authorization;
}

/** The status and body of an error answer in the wire format of the route it answers. */
export function errorAnswer(request: RoutedRequest, error: ApiError): { status: number; body: unknown } {
  return speaksAnthropic(request) ? anthropicError(error) : { status: error.status, body: error.toBody() };
}
