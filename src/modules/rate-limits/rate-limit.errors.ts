import { ApiError, ErrorKind } from 'src/common/errors/api-error';

export type LimitName = 'requests per minute' | 'tokens per minute' | 'token counts per minute';

/** Seconds until a window resets, as the `x-ratelimit-reset-*` headers give it (`"12s"`). */
export const resetIn = (ms: number) => `${Math.max(1, Math.ceil(ms / 1000))}s`;

/** The 429 names the model, the limit and the usage (docs/errors.md, "Statuses"). */
export function rateLimitExceeded(
  modelId: string,
  limit: LimitName,
  counts: { limit: number; used: number; requested: number; resetMs: number },
  endUser?: string,
): ApiError {
  const scope = endUser === undefined ? '' : ` for end user ${JSON.stringify(endUser)}`;
  const retryAfter = Math.max(1, Math.ceil(counts.resetMs / 1000));
  return new ApiError(
    ErrorKind.RateLimited,
    `Rate limit reached for ${modelId} on ${limit}${scope}: limit ${counts.limit}, used ${counts.used}, requested ${counts.requested}. Retry after ${retryAfter}s.`,
    null,
    undefined,
    { 'retry-after': String(retryAfter) },
  );
}
