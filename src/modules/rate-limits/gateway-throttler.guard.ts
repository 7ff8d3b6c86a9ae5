import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal, AuthenticatedRequest } from 'src/common/decorators/auth.decorators';
import { metrics } from 'src/common/metrics/metrics';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { rateLimitExceeded, resetIn } from 'src/modules/rate-limits/rate-limit.errors';
import { WindowRecord } from 'src/modules/rate-limits/redis-throttler.storage';

export enum Throttler {
  Requests = 'requests',
  EndUserRequests = 'end-user-requests',
}

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
 * Requests per minute per account and model (and per end user when the operator set that), on
 * @nestjs/throttler with Redis storage, so every API process counts against the same windows.
 * Runs after the global auth guard; limits come from ThrottlerModule's resolvers (rate-limits.module.ts).
 */
@Injectable()
export class GatewayThrottlerGuard extends ThrottlerGuard {
  // Property injection: ThrottlerGuard's constructor is fixed.
  @Inject(LimiterFailurePolicy) private readonly failures!: LimiterFailurePolicy;

  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler } = props;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const keys = requestKeys(request);
    const tracker =
      throttler.name === Throttler.EndUserRequests
        ? `${keys.accountId}:${keys.model}:${keys.user}`
        : `${keys.accountId}:${keys.model}`;
    const key = `gw:rl:${throttler.name}:${tracker}`;
    const record = await this.failures.check(
      () => this.storageService.increment(key, ttl, limit, ttl, throttler.name!) as Promise<WindowRecord>,
      null,
    );
    if (!record) {
      return true;
    }
    if (throttler.name === Throttler.Requests) {
      setHeaders(context, {
        'x-ratelimit-limit-requests': String(limit),
        'x-ratelimit-remaining-requests': String(Math.max(0, limit - record.totalHits)),
        'x-ratelimit-reset-requests': resetIn(record.resetMs),
      });
    }
    if (record.isBlocked) {
      metrics.rateLimited.inc({ limit: throttler.name });
      const endUser = throttler.name === Throttler.EndUserRequests ? keys.user : undefined;
      const counts = { limit, used: record.totalHits, requested: 1, resetMs: record.resetMs };
      throw rateLimitExceeded(keys.model, 'requests per minute', counts, endUser);
    }
    return true;
  }
}

export function setHeaders(context: ExecutionContext, headers: Record<string, string>): void {
  void context.switchToHttp().getResponse<FastifyReply>().headers(headers);
}
