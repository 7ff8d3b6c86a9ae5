import { FastifyRequest } from 'fastify';
import { anthropicError } from 'src/common/errors/anthropic-error';
import { ApiError } from 'src/common/errors/api-error';

/**
 * The route-level marker of a route that speaks Anthropic's wire format (`@RouteConfig(ANTHROPIC_WIRE)`):
 * the edge hooks, the auth guard and the error filter read it, so its errors — even those raised before
 * the handler (bad key, body limit, rate limits) — come in Anthropic's shape, and `x-api-key` is a key.
 */
export const ANTHROPIC_WIRE = { wire: 'anthropic' } as const;

type RoutedRequest = Pick<FastifyRequest, 'headers'> & { routeOptions?: { config?: unknown } };

export function speaksAnthropic(request: RoutedRequest): boolean {
  const config = request.routeOptions?.config as { wire?: string } | undefined;
  return config?.wire === ANTHROPIC_WIRE.wire;
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
