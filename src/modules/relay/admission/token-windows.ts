import { metrics } from 'src/common/metrics/metrics';
import { EffectiveLimits } from 'src/modules/rate-limits/rate-limit-policy.service';
import { rateLimitExceeded, resetIn } from 'src/modules/rate-limits/rate-limit.errors';
import { tokenWindowKey } from 'src/modules/rate-limits/rate-limit.keys';
import { LimitScope } from 'src/modules/relay/admission/request-windows';

/** A request's token windows (aligned to the minute, so the correction finds the one counted in). */
export interface TokenWindows {
  scope: LimitScope;
  keys: string[];
  limits: number[];
  /** The estimate counted at admission. */
  amount: number;
  ttlMs: number;
  resetMs: number;
}

/** What the windows said, from the script that counted them (AdmissionCounts). */
export interface TokenCount {
  /** Index of the window the estimate would take past its limit, -1 when counted. */
  refusedBy: number;
  /** Tokens used in the refusing window, or in the account's, this request's included, when counted. */
  used: number;
}

/**
 * Tokens per minute per account and model (and end user): which windows a request counts its
 * estimate in. The count is made in the admission's one script (AdmissionGate, TOKEN_WINDOWS),
 * counted only when the hold is taken; the correction to the real usage is the meter's
 * (MeteringService), from the windows' keys and the estimate counted.
 */
export function tokenWindows(
  scope: LimitScope,
  limits: EffectiveLimits,
  estimate: number,
  windowMs: number,
): TokenWindows {
  const { accountId, modelId, user } = scope;
  const now = Date.now();
  const window = Math.floor(now / windowMs);
  const keys = [tokenWindowKey(accountId, modelId, window)];
  const counted = [limits.tpm];
  if (user && limits.endUserTpm) {
    keys.push(tokenWindowKey(accountId, modelId, window, user));
    counted.push(limits.endUserTpm);
  }
  return { scope, keys, limits: counted, amount: estimate, ttlMs: windowMs, resetMs: (window + 1) * windowMs - now };
}

/**
 * The 429 when a window refused; else the `x-ratelimit-*-tokens` headers. A refusal that may not be
 * the answer (a quick estimate, tried again closer) is not counted in the metrics.
 */
export function tokenVerdict(windows: TokenWindows, count: TokenCount, final: boolean): Record<string, string> {
  const { scope, limits, amount, resetMs } = windows;
  if (count.refusedBy >= 0) {
    const endUser = count.refusedBy === 1 ? scope.user : undefined;
    if (final) {
      metrics.rateLimited.inc({ limit: endUser ? 'end-user-tokens' : 'tokens' });
    }
    const counts = { limit: limits[count.refusedBy], used: count.used, requested: amount, resetMs };
    throw rateLimitExceeded(scope.modelId, 'tokens per minute', counts, endUser);
  }
  return {
    'x-ratelimit-limit-tokens': String(limits[0]),
    'x-ratelimit-remaining-tokens': String(Math.max(0, limits[0] - count.used)),
    'x-ratelimit-reset-tokens': resetIn(resetMs),
  };
}
