import { Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import { ApiKeyPrincipal, AuthenticatedRequest } from 'src/common/decorators/auth.decorators';
import { EffectiveLimits } from 'src/modules/rate-limits/rate-limit-policy.service';
import { RequestWindows } from 'src/modules/rate-limits/request-rate-limiter';
import { Window } from 'src/modules/rate-limits/redis-throttler.storage';

export const REQUESTS_THROTTLER = 'requests';

export type LimitedRequest = AuthenticatedRequest & {
  limits?: EffectiveLimits | null;
  /** Left by the throttler guard; counted by the metering interceptor (RequestRateLimiter). */
  requestWindows?: RequestWindows;
};

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
 * @nestjs/throttler: runs after the global auth guard; the account's limit comes from
 * ThrottlerModule's resolver (rate-limits.module.ts), which also leaves the request's effective
 * limits on the request. The guard resolves the windows but does not count them itself: the
 * metering interceptor counts them in the same Redis round trip as the tokens per minute and the
 * balance hold. A round trip here first cost ~0.15 ms of every request's latency; the one
 * difference is that a request refused by validation (400) is not counted.
 */
@Injectable()
export class GatewayThrottlerGuard extends ThrottlerGuard {
  protected override handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl } = props;
    const request = context.switchToHttp().getRequest<LimitedRequest>();
    const keys = requestKeys(request);
    const endUserRpm = request.limits?.endUserRpm;
    const windows: Window[] = [{ key: `gw:rl:${keys.accountId}:${keys.model}`, limit }];
    if (keys.user && endUserRpm) {
      windows.push({ key: `gw:rl:${keys.accountId}:${keys.model}:u:${keys.user}`, limit: endUserRpm });
    }
    request.requestWindows = { windows, ttl, model: keys.model, user: keys.user };
    return Promise.resolve(true);
  }
}
