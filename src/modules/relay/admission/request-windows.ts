import { metrics } from 'src/common/metrics/metrics';
import { EffectiveLimits } from 'src/modules/rate-limits/rate-limit-policy.service';
import { rateLimitExceeded, resetIn } from 'src/modules/rate-limits/rate-limit.errors';
import { requestWindowKey } from 'src/modules/rate-limits/rate-limit.keys';

/** Who a request is counted for: its account on its model, and its end user (the body's `user`) if it named one. */
export interface LimitScope {
  accountId: string;
  modelId: string;
  user?: string;
}

/** A request's windows, in the order they are checked: the account's on the model, then its end user's. */
export interface RequestWindows {
  scope: LimitScope;
  keys: string[];
  limits: number[];
  ttlMs: number;
}

/** What the windows said of the request, from the script that counted it (AdmissionCounts). */
export interface RequestCount {
  /** Index of the window that refused, -1 when the request was counted in all. */
  refusedBy: number;
  /** Hits of the refusing window, or of the account's when counted. */
  hits: number;
  resetMs: number;
}

/**
 * Requests per minute per account and model, and per end user when the operator set that: which
 * windows a request counts in. The count itself is made in the admission's one script with the
 * tokens and the hold (AdmissionGate, REQUEST_WINDOWS), so every API process counts in the same
 * windows. Unlike a ThrottlerGuard, a request refused by validation (400) is not counted.
 */
export function requestWindows(scope: LimitScope, limits: EffectiveLimits, windowMs: number): RequestWindows {
  const { accountId, modelId, user } = scope;
  const keys = [requestWindowKey(accountId, modelId)];
  const counted = [limits.rpm];
  if (user && limits.endUserRpm) {
    keys.push(requestWindowKey(accountId, modelId, user));
    counted.push(limits.endUserRpm);
  }
  return { scope, keys, limits: counted, ttlMs: windowMs };
}

/** Where a verdict's headers go (the reply); a refusal's go too, so the 429 carries them. */
export interface HeaderSink {
  headers(values: Record<string, string>): unknown;
}

/**
 * `sink` receives the account window's `x-ratelimit-*-requests` headers, admitted or refused by that
 * window (none when the end user's window refused); a refusal throws the 429.
 */
export function requestVerdict(windows: RequestWindows, count: RequestCount, sink: HeaderSink): void {
  const { scope, limits } = windows;
  const resetMs = count.resetMs > 0 ? count.resetMs : windows.ttlMs;
  if (count.refusedBy !== 1) {
    sink.headers({
      'x-ratelimit-limit-requests': String(limits[0]),
      'x-ratelimit-remaining-requests': String(Math.max(0, limits[0] - count.hits)),
      'x-ratelimit-reset-requests': resetIn(resetMs),
    });
  }
  if (count.refusedBy >= 0) {
    const endUser = count.refusedBy === 1 ? scope.user : undefined;
    metrics.rateLimited.inc({ limit: endUser ? 'end-user-requests' : 'requests' });
    const counts = { limit: limits[count.refusedBy], used: count.hits, requested: 1, resetMs };
    throw rateLimitExceeded(scope.modelId, 'requests per minute', counts, endUser);
  }
}
