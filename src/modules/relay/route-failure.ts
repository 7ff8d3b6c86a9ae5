import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { BreakerView, FailureKind, kindOfStatus, sharedKind } from 'src/modules/channels/health/breaker-policy';
import { readJsonBounded } from 'src/modules/relay/upstream/bounded-body';
import { UpstreamErrorDetails } from 'src/modules/relay/upstream/provider-adapter';
import { UpstreamBody } from 'src/modules/relay/upstream/upstream-client';
import { sanitizeUpstreamMessage, sanitizeUpstreamParam } from 'src/modules/relay/upstream/upstream-error-text';
import { CatalogRoute } from 'src/modules/models/catalog.service';

/** Why a route could not serve: `breaker` says whether it counts against the channel's breaker. */
export type RouteFailure = ({ kind: 'unreachable' } | { kind: 'status'; status: number } | { kind: 'abnormal' }) & {
  breaker: boolean;
};

/** What became of one upstream request, for upstream_requests_total. */
export type UpstreamOutcome =
  | 'ok'
  | 'client_error'
  | 'unreachable'
  | 'timeout'
  | 'capacity'
  | 'auth'
  | 'server_error'
  | 'account'
  | 'abnormal'
  | 'broken'
  | 'client_aborted';

// Statuses that say "this route cannot serve now", not "the request is wrong": try the next route.
const ROUTE_FAILURE_STATUSES = new Set([401, 402, 403, 404, 408, 409, 429]);
// Of those and the 5xx, the ones that say the channel itself is failing, for its breaker: 404 and 409
// are about this model or this request at the channel, not the channel.
const BREAKER_STATUSES = new Set([401, 402, 403, 408, 429]);

/**
 * An upstream's non-2xx status: a failure of this route (the next is tried) with its outcome, or
 * null when the request itself is at fault and the upstream's words go to the client as a 400.
 */
export function statusFailure(status: number): { failure: RouteFailure; outcome: UpstreamOutcome } | null {
  if (status < 500 && !ROUTE_FAILURE_STATUSES.has(status)) {
    return null;
  }
  const breaker = status >= 500 || BREAKER_STATUSES.has(status);
  const outcome: UpstreamOutcome = !breaker
    ? 'client_error'
    : status === 429 || status === 529
      ? 'capacity'
      : status >= 500
        ? 'server_error'
        : 'auth';
  return { failure: { kind: 'status', status, breaker }, outcome };
}

/** The kind of failure the breaker keeps, for the answer when every route is open. */
export function breakerKind(failure: RouteFailure): FailureKind {
  return failure.kind === 'unreachable'
    ? 'unreachable'
    : kindOfStatus(failure.kind === 'status' ? failure.status : 500);
}

/** A failure as the operator's health view shows it: what happened, never the upstream's own words. */
export function describeFailure(failure: RouteFailure, outcome: UpstreamOutcome, detail?: string): string {
  switch (failure.kind) {
    case 'unreachable':
      // `detail` is an error code, or a message that may name a host: sanitized all the same.
      return sanitizeUpstreamMessage(
        `${outcome === 'timeout' ? 'timed out' : 'unreachable'} (${detail ?? 'no answer'})`,
        '',
      );
    case 'status':
      return outcome === 'account' ? `status ${failure.status}: the account cannot serve` : `status ${failure.status}`;
    case 'abnormal':
      return outcome === 'broken' ? 'the stream broke off' : 'abnormal answer';
  }
}

/** The answer (docs/errors.md, "Statuses") when the last route tried failed so. */
export function finalError(failure: RouteFailure, modelId: string, headers: Record<string, string> = {}): ApiError {
  switch (failure.kind) {
    case 'unreachable':
      return new ApiError(
        ErrorKind.UpstreamUnreachable,
        `The gateway could not reach an upstream provider for '${modelId}'. Retry in a few minutes.`,
        null,
        undefined,
        headers,
      );
    case 'status':
      return failure.status === 429 || failure.status === 529
        ? new ApiError(
            ErrorKind.Overloaded,
            `The upstream providers for '${modelId}' are at capacity. Retry later.`,
            null,
            undefined,
            headers,
          )
        : new ApiError(
            ErrorKind.UpstreamError,
            `The upstream provider for '${modelId}' failed (status ${failure.status}). Retry in a few seconds.`,
            null,
            undefined,
            headers,
          );
    case 'abnormal':
      return new ApiError(
        ErrorKind.UpstreamError,
        `The upstream provider for '${modelId}' sent an abnormal response. Retry in a few seconds.`,
        null,
        undefined,
        headers,
      );
  }
}

/** The answer when every route was skipped as open: what their last failures share, with `retry-after`. */
export function allOpenError(views: BreakerView[], modelId: string, retryAfterSeconds: number): ApiError {
  const headers = { 'retry-after': String(retryAfterSeconds) };
  const message = `Every upstream provider for '${modelId}' is failing at the moment. Retry after ${retryAfterSeconds} s.`;
  const kind = {
    unreachable: ErrorKind.UpstreamUnreachable,
    capacity: ErrorKind.Overloaded,
    error: ErrorKind.UpstreamError,
  }[sharedKind(views)];
  return new ApiError(kind, message, null, undefined, headers);
}

/** An error body is a message and a few fields; anything longer is not worth reading. */
export const ERROR_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * An upstream 4xx that is not a route failure: the request's fault, relayed as a 400 (413) with the
 * upstream's words made safe to show; or, when it says the channel's own account cannot serve, a
 * route failure like a 401, counted against the channel's breaker.
 */
export function upstreamRefusal(
  route: CatalogRoute,
  details: UpstreamErrorDetails | null,
  status: number,
): ApiError | RouteFailure {
  if (details?.channelCannotServe) {
    return { kind: 'status', status, breaker: true };
  }
  const message = details
    ? sanitizeUpstreamMessage(details.message, route.channel.apiKey)
    : `The upstream provider rejected the request (status ${status}).`;
  return status === 413
    ? new ApiError(ErrorKind.PayloadTooLarge, message)
    : ApiError.invalid(message, sanitizeUpstreamParam(details?.param ?? null));
}

/**
 * A non-2xx upstream answer, read as far as needed: a failure of this route (the next one is tried),
 * or, when the request itself is at fault, the client's error thrown with the upstream's words made safe.
 */
export async function failedAnswer(
  route: CatalogRoute,
  adapter: { errorDetails(body: unknown): UpstreamErrorDetails | null },
  status: number,
  body: UpstreamBody,
): Promise<RouteFailure> {
  const failed = statusFailure(status);
  if (failed) {
    await body.dump();
    return failed.failure;
  }
  const refusal = upstreamRefusal(
    route,
    adapter.errorDetails(await readJsonBounded(body, ERROR_BODY_LIMIT_BYTES)),
    status,
  );
  if (refusal instanceof ApiError) {
    throw refusal;
  }
  return refusal;
}
