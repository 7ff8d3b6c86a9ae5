import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal, AuthenticatedRequest } from 'src/common/decorators/auth.decorators';
import { metrics } from 'src/common/metrics/metrics';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { EffectiveLimits } from 'src/modules/rate-limits/rate-limit-policy.service';
import { rateLimitExceeded, resetIn } from 'src/modules/rate-limits/rate-limit.errors';
import { RedisThrottlerStorage, Window } from 'src/modules/rate-limits/redis-throttler.storage';

export const REQUESTS_THROTTLER = 'requests';

export type LimitedRequest = AuthenticatedRequest & { limits?: EffectiveLimits | null };

/** The fields the limits are keyed by, read from the (already parsed) body. */
export function requestKeys(request: AuthenticatedRequest): { accountId: string; model: string; user?: string } {
  const body = (request.body ?? {}) as { model?: unknown; user?: unknown };
  return {
    accountId: (request.principal as ApiKeyPrincipal).accountId,
    model: typeof body.model === 'string' ? body.model : '',
    user: typeof body.user === 'string' && body.user !== '' ? body.user : undefined,
  };
}

/**
 * Requests per minute per account and model, and per end user when the operator set that, on
 * @nestjs/throttler with Redis storage: every API process counts against the same windows. Runs
 * after the global auth guard; the account's limit comes from ThrottlerModule's resolver
 * (rate-limits.module.ts), which also leaves the request's effective limits on the request.
 */
@Injectable()
export class GatewayThrottlerGuard extends ThrottlerGuard {
  // Property injection: ThrottlerGuard's constructor is fixed.
  @Inject(LimiterFailurePolicy) private readonly failures!: LimiterFailurePolicy;
  @Inject(RedisThrottlerStorage) private readonly windows!: RedisThrottlerStorage;

  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl } = props;
    const request = context.switchToHttp().getRequest<LimitedRequest>();
    const keys = requestKeys(request);
    const endUserRpm = request.limits?.endUserRpm;
    const windows: Window[] = [{ key: `gw:rl:${keys.accountId}:${keys.model}`, limit }];
    if (keys.user && endUserRpm) {
      windows.push({ key: `gw:rl:${keys.accountId}:${keys.model}:u:${keys.user}`, limit: endUserRpm });
    }
    const record = await this.failures.check(() => this.windows.incrementWindows(windows, ttl), null);
    if (!record) {
      return true;
    }
    const accountHits = record.refusedBy === 1 ? null : record.hits;
    if (accountHits !== null) {
      setHeaders(context, {
        'x-ratelimit-limit-requests': String(limit),
        'x-ratelimit-remaining-requests': String(Math.max(0, limit - accountHits)),
        'x-ratelimit-reset-requests': resetIn(record.resetMs),
      });
    }
    if (record.refusedBy >= 0) {
      const endUser = record.refusedBy === 1 ? keys.user : undefined;
      metrics.rateLimited.inc({ limit: endUser ? 'end-user-requests' : 'requests' });
      const counts = {
        limit: windows[record.refusedBy].limit,
        used: record.hits,
        requested: 1,
        resetMs: record.resetMs,
      };
      throw rateLimitExceeded(keys.model, 'requests per minute', counts, endUser);
    }
    return true;
  }
}

export function setHeaders(context: ExecutionContext, headers: Record<string, string>): void {
  void context.switchToHttp().getResponse<FastifyReply>().headers(headers);
}
