import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { UpstreamErrorDetails } from 'src/modules/chat-completions/upstream/provider-adapter';
import {
  sanitizeUpstreamMessage,
  sanitizeUpstreamParam,
} from 'src/modules/chat-completions/upstream/upstream-error-text';
import { CatalogRoute } from 'src/modules/models/catalog.service';

/** Why a route could not serve: the next one is tried, and the last one's reason is the answer. */
export type RouteFailure = { kind: 'unreachable' } | { kind: 'status'; status: number } | { kind: 'abnormal' };

// Statuses that say "this route cannot serve now", not "the request is wrong": try the next route.
export const ROUTE_FAILURE_STATUSES = new Set([401, 402, 403, 404, 408, 409, 429]);

/** An error body is a message and a few fields; anything longer is not worth reading. */
export const ERROR_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * An upstream 4xx: the request's fault, relayed as a 400 (413) with the upstream's words made safe
 * to show; or, when it says the channel's own account cannot serve, a route failure like a 401.
 */
export function upstreamRefusal(
  route: CatalogRoute,
  details: UpstreamErrorDetails | null,
  status: number,
): ApiError | RouteFailure {
  if (details?.channelCannotServe) {
    return { kind: 'status', status };
  }
  const message = details
    ? sanitizeUpstreamMessage(details.message, route.channel.apiKey)
    : `The upstream provider rejected the request (status ${status}).`;
  return status === 413
    ? new ApiError(ErrorKind.PayloadTooLarge, message)
    : ApiError.invalid(message, sanitizeUpstreamParam(details?.param ?? null));
}

/** The answer when every route failed: the last failure, told as SPEC 7's 500, 502 or 503. */
export function finalError(failure: RouteFailure, modelId: string): ApiError {
  switch (failure.kind) {
    case 'unreachable':
      return new ApiError(
        ErrorKind.UpstreamUnreachable,
        `The gateway could not reach an upstream provider for '${modelId}'. Retry in a few minutes.`,
      );
    case 'status':
      return failure.status === 429
        ? new ApiError(ErrorKind.Overloaded, `The upstream providers for '${modelId}' are at capacity. Retry later.`)
        : new ApiError(
            ErrorKind.UpstreamError,
            `The upstream provider for '${modelId}' failed (status ${failure.status}). Retry in a few seconds.`,
          );
    case 'abnormal':
      return new ApiError(
        ErrorKind.UpstreamError,
        `The upstream provider for '${modelId}' sent an abnormal response. Retry in a few seconds.`,
      );
  }
}
