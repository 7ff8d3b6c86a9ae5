import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { LOGGER } from 'src/common/logging/logger';
import { inOneWrite, writeOfTurn, writesNow } from 'src/common/redis/one-write';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { formatUsd } from 'src/common/money/money';
import { WindowCorrection } from 'src/common/redis/window-scripts';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import {
  AdmissionCounters,
  AdmissionCounts,
  BalanceGateService,
  CountedHold,
  HoldKey,
} from 'src/modules/ledger/balance-gate.service';
import { KeySpendRepository } from 'src/modules/billing/key-spend.repository';
import { BillingQueue } from 'src/modules/billing/billing.queue';
import { UsageFallbackService } from 'src/modules/billing/usage-fallback.service';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { UsageRecorder } from 'src/modules/billing/usage-recorder';
import { usagePayloadJson } from 'src/modules/billing/usage-payload-json';
import { isoTime } from 'src/common/time/iso-time';
import { splitUsageCost, worstCaseCost } from 'src/modules/billing/pricing';
import { CompletionMeter, MeteredRequest, MeteredResult, TokenUsage } from 'src/modules/billing/metering.types';

/** On shutdown, the longest the API waits for usage not yet durable (within SHUTDOWN_GRACE_MS). */
const SHUTDOWN_RECORDING_WAIT_MS = 10_000;

/**
 * Rate windows counted in the hold's own Redis step (one script, one round trip), and what becomes
 * of them: `verdict` throws the refusal (a 429) when a window refused, before the hold's outcome is
 * looked at; once the request ends, its windows are corrected to its real usage, with the usage
 * record when there is one.
 */
export interface HeldCounters {
  windows: AdmissionCounters;
  verdict(counts: AdmissionCounts): void;
  /** Takes the correction for `usage`, to send in the usage record's own script (once: later calls return null). */
  takeCorrection(usage: TokenUsage): WindowCorrection | null;
  /** Nothing is billed but `usage` still counts: the correction is sent now, on its own (once). */
  correctNow(usage: TokenUsage): void;
}

interface MeterContext {
  request: MeteredRequest;
  hold: bigint;
  /** When the request was admitted (epoch ms): the record's createdAt. */
  receivedAtMs: number;
}

/**
 * The API side of billing: one atomic hold before relaying, the usage recorded after. No
 * database round trip here except when Redis has no balance snapshot for the account yet, or when
 * Redis does not take a usage record and it is settled straight into Postgres instead.
 */
@Injectable()
export class MeteringService implements BeforeApplicationShutdown {
  private readonly recorder: UsageRecorder;

  constructor(
    private readonly gate: BalanceGateService,
    private readonly usage: UsageQueueService,
    private readonly queue: BillingQueue,
    private readonly accounts: AccountsRepository,
    fallback: UsageFallbackService,
    private readonly keySpend: KeySpendRepository,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.recorder = new UsageRecorder(
      {
        toRedis: (payload, correction) =>
          writesNow(this.redis)
            ? this.usage
                .recordUsage(payload.accountId, payload.requestId, usagePayloadJson(payload), correction)
                // Asked once the record is in Redis, so the job never runs before the record it is for.
                .then(() => this.queue.requestSettlement())
            : null,
        toPostgres: (payload) => fallback.settle(payload),
      },
      logger,
    );
  }

  /** After the HTTP drain, before Redis and Postgres close: usage not yet durable gets its chance. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.recorder.drain(Math.min(SHUTDOWN_RECORDING_WAIT_MS, this.config.shutdownGraceMs));
  }

  /**
   * Holds the request's worst-case cost, counting `counters` in the same step; 403
   * insufficient_balance when the balance cannot cover it, 403 key_spend_limit_reached when the
   * key's limit cannot, whatever `counters.verdict` throws when a window refused.
   */
  async admit(request: MeteredRequest, counters: HeldCounters): Promise<CompletionMeter> {
    const { requestId, held } = request;
    // Any prompt token may turn out a cache write: held at the dearest prompt price.
    const hold = worstCaseCost(request.model, held.promptTokens, held.completionTokens);
    const key = { id: request.keyId, spendLimit: request.keySpendLimit };
    const { hold: result, counts } = await this.hold(request, hold, key, counters.windows).catch((error: Error) => {
      // Without a hold nothing can be billed safely, so nothing is relayed.
      this.logger.error({ err: error.message, reqId: requestId }, 'balance hold failed');
      throw new ApiError(ErrorKind.Overloaded, 'Billing is temporarily unavailable. Retry shortly.', null, undefined, {
        'retry-after': '10',
      });
    });
    try {
      counters.verdict(counts);
    } catch (error) {
      // A verdict refuses only what the script refused; should it ever refuse a request held, the hold goes back now.
      if (result.outcome === 'held') {
        await this.usage.release(request.accountId, requestId).catch(() => undefined);
      }
      throw error;
    }
    if (result.outcome === 'counterRefused') {
      // The verdict throws for every refusal the script reports; this is a mismatch between the two.
      throw new Error('a rate window refused the request but the verdict let it through');
    }
    if (result.outcome === 'keyLimitReached') {
      throw new ApiError(
        ErrorKind.KeySpendLimitReached,
        `This API key's spend limit of $${formatUsd(key.spendLimit ?? 0n)} is reached: this request may cost up to $${formatUsd(hold)} and $${formatUsd(result.left < 0n ? 0n : result.left)} of the limit is left. Raise the limit in the console, or lower max_tokens.`,
      );
    }
    if (result.outcome !== 'held') {
      const available = result.outcome === 'insufficient' ? result.available : 0n;
      throw new ApiError(
        ErrorKind.InsufficientBalance,
        `Insufficient balance: this request may cost up to $${formatUsd(hold)} and $${formatUsd(available < 0n ? 0n : available)} is available. Top up, or lower max_tokens.`,
      );
    }
    const context: MeterContext = { request, hold, receivedAtMs: Date.now() };
    let recorded = false;
    return {
      record: (outcome) => {
        recorded = true;
        return this.record(context, outcome, counters);
      },
      // Once usage is recorded, settlement (or the fallback) owns the hold; releasing it early would
      // let it be spent twice. Redis refuses too when a recording landed whose reply never came back.
      release: async () => (recorded ? false : this.release(context)),
    };
  }

  /**
   * The hold, loading the account's balance (and the limited key's spent) into Redis first if Redis
   * does not know them yet: at most one load of each, so three tries.
   */
  private async hold(
    request: MeteredRequest,
    amount: bigint,
    key: HoldKey,
    counters: AdmissionCounters,
  ): Promise<CountedHold> {
    const { accountId, requestId } = request;
    for (let attempt = 0; attempt < 3; attempt++) {
      const admitted = await this.gate.admit(accountId, requestId, amount, key, counters);
      const result = admitted.hold;
      if (result.outcome === 'unknown') {
        const snapshot = await this.accounts.findBalanceSnapshot(accountId);
        await this.gate.sync(accountId, snapshot ?? { balance: 0n, version: 0n });
      } else if (result.outcome === 'keyUnknown') {
        await this.gate.syncKeySpent(accountId, key.id, await this.keySpend.findSpent(key.id));
      } else {
        return admitted;
      }
    }
    // The epoch changed in between (Redis restarted just now): a 503, not a false 403.
    throw new Error('the balance snapshot was replaced while it loaded');
  }

  private async record(context: MeterContext, result: MeteredResult, counters: HeldCounters): Promise<TokenUsage> {
    const { request } = context;
    // Our tokenizer may count differently from the upstream's: an estimate never exceeds what the
    // upstream was allowed to generate, which is also what the hold covered.
    // Held at a quick bound, the estimate is the closer one (HeldTokens.closer): its prompt, and its
    // output cap (which counts a prediction's tokens).
    const estimated = result.usage ? request.held : (request.held.closer?.() ?? request.held);
    const usage = result.usage ?? {
      promptTokens: estimated.promptTokens,
      completionTokens: Math.min(result.deliveredTokens(), estimated.completionTokens),
    };
    if (result.usage) {
      this.reportUsageAboveHold(context, result.usage);
    }
    if (result.status !== 'completed' && usage.completionTokens === 0) {
      // Cut off before a single token reached the client: like any error, it costs nothing.
      counters.correctNow(usage);
      await this.release(context);
      return usage;
    }
    const { model } = request;
    const payload: SettleCompletionPayload = {
      requestId: request.requestId,
      accountId: request.accountId,
      keyId: request.keyId,
      modelId: model.id,
      channelId: result.channelId,
      inputPrice: model.inputPrice.toString(),
      outputPrice: model.outputPrice.toString(),
      cachedInputPrice: model.cachedInputPrice?.toString(),
      cacheWriteInputPrice: model.cacheWriteInputPrice?.toString(),
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cachedTokens: usage.cachedTokens,
      cacheWriteTokens: usage.cacheWriteTokens,
      reasoningTokens: usage.reasoningTokens,
      usageSource: result.usage ? 'upstream' : 'estimated',
      status: result.status,
      upstreamLatencyMs: result.upstreamLatencyMs,
      createdAt: isoTime(context.receivedAtMs),
      recordedAtMs: Date.now(),
      clientRequestId: request.clientRequestId ?? undefined,
      providerRequestId: result.providerRequestId ?? undefined,
      firstByteMs: result.firstByteMs,
    };
    // The record leaves in this turn's write, before the answer's last bytes, which do not wait for
    // Redis's reply: the recorder retries a failed record, then settles it straight into Postgres.
    // The token windows' correction is made by the record's own script.
    inOneWrite(this.redis, () => this.recorder.record(payload, counters.takeCorrection(usage)));
    await writeOfTurn(this.redis);
    return usage;
  }

  /**
   * The upstream's usage is billed as reported, and settlement charges at most what is left (logging the
   * shortfall). Usage above the hold means the estimate missed something the upstream bills: say so,
   * with the counts only, so that it can be fixed.
   */
  private reportUsageAboveHold({ request, hold }: MeterContext, usage: TokenUsage): void {
    const { requestId, model, held } = request;
    const cost = splitUsageCost(model, usage);
    if (cost <= hold && usage.completionTokens <= held.completionTokens) {
      return;
    }
    this.logger.warn(
      {
        reqId: requestId,
        modelId: model.id,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        heldPromptTokens: held.promptTokens,
        heldCompletionTokens: held.completionTokens,
        cost: cost.toString(),
        hold: hold.toString(),
      },
      'upstream usage exceeds the hold',
    );
  }

  /** Nothing was delivered: the hold goes back, nothing is billed. False when it stayed. */
  private async release(context: MeterContext): Promise<boolean> {
    const { accountId, requestId } = context.request;
    return this.usage.release(accountId, requestId).catch((error: Error) => {
      // The sweeper releases it later; the customer is only short of that hold until then.
      this.logger.error({ err: error.message, reqId: requestId }, 'could not release hold');
      return false;
    });
  }
}
