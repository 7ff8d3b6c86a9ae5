import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { RequestTrace } from 'src/common/http/request-trace';
import { ApiKeyPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { LOGGER } from 'src/common/logging/logger';
import { formatUsd } from 'src/common/money/money';
import { inOneWrite } from 'src/common/redis/one-write';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { MeteringService } from 'src/modules/billing/metering.service';
import { CompletionMeter, HeldTokens } from 'src/modules/billing/metering.types';
import { worstCaseCost } from 'src/modules/billing/pricing';
import { AdmissionCounters, BalanceGateService, CountedHold, HoldKey } from 'src/modules/ledger/balance-gate.service';
import { CatalogModel } from 'src/modules/models/catalog.service';
import { EffectiveLimits } from 'src/modules/rate-limits/rate-limit-policy.service';
import {
  HeaderSink,
  LimitScope,
  requestVerdict,
  requestWindows,
  RequestWindows,
} from 'src/modules/relay/admission/request-windows';
import { tokenVerdict, tokenWindows } from 'src/modules/relay/admission/token-windows';

/** What the admission counts and holds for one request: the data rate limits and billing supply. */
export interface AdmissionTicket {
  principal: ApiKeyPrincipal;
  /** Our request id (the bill's key) and the client's own, kept on the usage record. */
  trace: Pick<RequestTrace, 'id' | 'clientId'>;
  /** Its prices make the hold (billing's worstCaseCost). */
  model: CatalogModel;
  /** The most the upstream can bill (billing's estimate): counted in the token windows and held. */
  held: HeldTokens;
  /** The account's limits on the model (rate limits' RateLimitPolicy). */
  limits: EffectiveLimits;
  /** The end user the body names, whose own windows count when the operator set their limits. */
  user: string | undefined;
}

/** A request let through: its meter (the hold taken), the token windows' headers, and the tokens held. */
export interface AdmissionVerdict {
  meter: CompletionMeter;
  headers: Record<string, string>;
  held: HeldTokens;
}

/** A request already counted in its request windows, counted again with a closer bound. */
const NOT_COUNTED_AGAIN = { keys: [], limits: [], ttlMs: 0 };

/**
 * The admission's one owner: requests per minute, tokens per minute and the balance hold (and the
 * key's spend limit), counted by one Redis script in the account's slot and one round trip
 * (BalanceGateService.admit runs it; REQUEST_WINDOWS and TOKEN_WINDOWS are its windows), read into
 * one verdict: the first refusal in that order (429, 429, 403), or the meter. A request refused by
 * its windows leaves nothing to give back but its place in the request windows. Rate limits supply
 * the limits, billing the prices, the estimate and the snapshots to load; nothing calls back.
 */
@Injectable()
export class AdmissionGate {
  constructor(
    private readonly balances: BalanceGateService,
    private readonly metering: MeteringService,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The verdict, or the refusal thrown. `sink` receives the request windows' headers, a refusal's
   * too. A quick bound refused by the tokens, the balance or the key's limit is counted again with
   * the closer one (HeldTokens.closer), in the token windows and the hold only: the request is
   * counted already.
   */
  admit(ticket: AdmissionTicket, sink: HeaderSink): Promise<AdmissionVerdict> {
    const scope: LimitScope = { accountId: ticket.principal.accountId, modelId: ticket.model.id, user: ticket.user };
    const requests = requestWindows(scope, ticket.limits, this.config.rateLimits.windowMs);
    const { closer } = ticket.held;
    const progress = { requestCounted: false };
    const first = this.countOnce(ticket, scope, ticket.held, requests, sink, progress, !closer);
    if (!closer) {
      return first;
    }
    return first.catch((error: unknown) => {
      if (!progress.requestCounted || !(error instanceof ApiError)) {
        throw error;
      }
      return this.countOnce(ticket, scope, closer(), null, sink, progress, true);
    });
  }

  /**
   * One admission script; without `requests`, the request is not counted again. `final`: whether a
   * token window's refusal is the answer (counted in the metrics), or may be tried again.
   */
  private async countOnce(
    ticket: AdmissionTicket,
    scope: LimitScope,
    held: HeldTokens,
    requests: RequestWindows | null,
    sink: HeaderSink,
    progress: { requestCounted: boolean },
    final: boolean,
  ): Promise<AdmissionVerdict> {
    const { principal, trace, model } = ticket;
    const requestId = trace.id;
    const windowMs = this.config.rateLimits.windowMs;
    const tokens = tokenWindows(scope, ticket.limits, held.promptTokens + held.completionTokens, windowMs);
    // Any prompt token may turn out a cache write: held at the dearest prompt price, at the account group's prices.
    const priceMultiplierPpm = principal.group.priceMultiplierPpm;
    const amount = worstCaseCost(model, held.promptTokens, held.completionTokens, priceMultiplierPpm);
    const key = { id: principal.keyId, spendLimit: principal.spendLimit };
    const counters = { requests: requests ?? NOT_COUNTED_AGAIN, tokens };
    const metered = {
      requestId,
      clientRequestId: trace.clientId,
      accountId: principal.accountId,
      keyId: principal.keyId,
      keySpendLimit: principal.spendLimit,
      priceMultiplierPpm,
      model,
      held,
    };
    // The script leaves in the turn's one write, with the other requests' of the same turn.
    const { hold, counts } = await inOneWrite(this.redis, () =>
      this.hold(principal.accountId, requestId, amount, key, counters),
    ).catch((error: Error) => {
      // Without a hold nothing can be billed safely, so nothing is relayed.
      this.logger.error({ err: error.message, reqId: requestId }, 'balance hold failed');
      throw new ApiError(ErrorKind.Overloaded, 'Billing is temporarily unavailable. Retry shortly.', null, undefined, {
        'retry-after': '10',
      });
    });
    let headers: Record<string, string>;
    try {
      if (requests) {
        requestVerdict(requests, counts.requests, sink);
        progress.requestCounted = true;
      }
      headers = tokenVerdict(tokens, counts.tokens, final);
    } catch (error) {
      // A window refuses only what the script refused; should it ever refuse a request held, the hold goes back now.
      if (hold.outcome === 'held') {
        await this.metering.meter(metered, amount, tokens).release();
      }
      throw error;
    }
    if (hold.outcome === 'counterRefused') {
      // The windows' verdict throws for every refusal the script reports; this is a mismatch between the two.
      throw new Error('a rate window refused the request but the verdict let it through');
    }
    if (hold.outcome === 'keyLimitReached') {
      throw new ApiError(
        ErrorKind.KeySpendLimitReached,
        `This API key's spend limit of $${formatUsd(key.spendLimit ?? 0n)} is reached: this request may cost up to $${formatUsd(amount)} and $${formatUsd(hold.left < 0n ? 0n : hold.left)} of the limit is left. Raise the limit in the console, or lower max_tokens.`,
      );
    }
    if (hold.outcome !== 'held') {
      const available = hold.outcome === 'insufficient' ? hold.available : 0n;
      throw new ApiError(
        ErrorKind.InsufficientBalance,
        `Insufficient balance: this request may cost up to $${formatUsd(amount)} and $${formatUsd(available < 0n ? 0n : available)} is available. Top up, or lower max_tokens.`,
      );
    }
    return { meter: this.metering.meter(metered, amount, tokens), headers, held };
  }

  /**
   * The hold, loading the account's balance (and the limited key's spent) into Redis first if Redis
   * does not know them yet: at most one load of each, so three tries.
   */
  private async hold(
    accountId: string,
    requestId: string,
    amount: bigint,
    key: HoldKey,
    counters: AdmissionCounters,
  ): Promise<CountedHold> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const admitted = await this.balances.admit(accountId, requestId, amount, key, counters);
      const outcome = admitted.hold.outcome;
      if (outcome === 'unknown') {
        await this.metering.loadBalance(accountId);
      } else if (outcome === 'keyUnknown') {
        await this.metering.loadKeySpent(accountId, key.id);
      } else {
        return admitted;
      }
    }
    // The epoch changed in between (Redis restarted just now): a 503, not a false 403.
    throw new Error('the balance snapshot was replaced while it loaded');
  }
}
