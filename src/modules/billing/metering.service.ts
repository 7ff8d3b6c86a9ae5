import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { LOGGER } from 'src/common/logging/logger';
import { inOneWrite, writeOfTurn, writesNow } from 'src/common/redis/one-write';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { ONE_MULTIPLIER_PPM } from 'src/common/money/price-multiplier';
import { WindowCorrection } from 'src/common/redis/window-scripts';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { KeySpendRepository } from 'src/modules/billing/key-spend.repository';
import { BillingQueue } from 'src/modules/billing/billing.queue';
import { UsageFallbackService } from 'src/modules/billing/usage-fallback.service';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { UsageRecorder } from 'src/modules/billing/usage-recorder';
import { usagePayloadJson } from 'src/modules/billing/usage-payload-json';
import { isoTime } from 'src/common/time/iso-time';
import { splitUsageCost } from 'src/modules/billing/pricing';
import {
  CompletionMeter,
  CountedTokens,
  MeteredRequest,
  MeteredResult,
  TokenUsage,
} from 'src/modules/billing/metering.types';

/** On shutdown, the longest the API waits for usage not yet durable (within SHUTDOWN_GRACE_MS). */
const SHUTDOWN_RECORDING_WAIT_MS = 10_000;

interface MeterContext {
  request: MeteredRequest;
  hold: bigint;
  /** When the request was admitted (epoch ms): the record's createdAt. */
  receivedAtMs: number;
  tokens: CountedTokens;
  /** Whether the token windows' correction was taken: it is made once, whichever way comes first. */
  corrected: boolean;
}

/**
 * The API side of billing: the meter of a request admitted (AdmissionGate took its hold), and the
 * snapshots the admission loads when Redis does not know them yet. No database round trip here
 * except those loads, or when Redis does not take a usage record and it is settled straight into
 * Postgres instead.
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
   * The meter of a request whose `hold` (nano-dollars) was taken with its `tokens` counted, at
   * admission. Its usage is recorded once; its hold goes back (and its tokens) only if none was.
   */
  meter(request: MeteredRequest, hold: bigint, tokens: CountedTokens): CompletionMeter {
    const context: MeterContext = { request, hold, receivedAtMs: Date.now(), tokens, corrected: false };
    let recorded = false;
    return {
      record: (outcome) => {
        recorded = true;
        return this.record(context, outcome);
      },
      // Once usage is recorded, settlement (or the fallback) owns the hold; releasing it early would
      // let it be spent twice. Redis refuses too when a recording landed whose reply never came back.
      release: async () => {
        if (recorded) {
          return false;
        }
        const released = await this.release(context);
        if (released) {
          this.correctTokens(context, 0);
        }
        return released;
      },
    };
  }

  /** Loads the account's balance from Postgres into Redis (the admission found no snapshot of this epoch). */
  async loadBalance(accountId: string): Promise<void> {
    const snapshot = await this.accounts.findBalanceSnapshot(accountId);
    await this.gate.sync(accountId, snapshot ?? { balance: 0n, version: 0n });
  }

  /** Loads the key's spent from Postgres into Redis (the admission found none of this epoch). */
  async loadKeySpent(accountId: string, keyId: string): Promise<void> {
    await this.gate.syncKeySpent(accountId, keyId, await this.keySpend.findSpent(keyId));
  }

  private async record(context: MeterContext, result: MeteredResult): Promise<TokenUsage> {
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
      this.correctTokens(context, actualTokens(usage));
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
      // Left out at 1×, as in records written before groups: settlement reads its absence as 1×.
      priceMultiplierPpm:
        request.priceMultiplierPpm === ONE_MULTIPLIER_PPM ? undefined : request.priceMultiplierPpm.toString(),
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
    inOneWrite(this.redis, () => this.recorder.record(payload, takeCorrection(context, actualTokens(usage))));
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
    const cost = splitUsageCost(model, usage, request.priceMultiplierPpm);
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

  /** Sends the token windows' correction now (not awaited), unless it was taken already. */
  private correctTokens(context: MeterContext, actual: number): void {
    const correction = takeCorrection(context, actual);
    if (!correction || correction.delta === 0) {
      return;
    }
    this.usage.correctTokens(correction).catch((error: Error) => {
      this.logger.warn({ err: error.message }, 'could not correct the token window');
    });
  }
}

/**
 * The correction that replaces the estimate counted at admission with the tokens used; null once
 * taken: when a recording fails after its correction went out, the give-back that follows must not
 * correct again.
 */
function takeCorrection(context: MeterContext, actual: number): WindowCorrection | null {
  if (context.corrected) {
    return null;
  }
  context.corrected = true;
  return { keys: context.tokens.keys, delta: actual - context.tokens.amount };
}

function actualTokens(usage: TokenUsage): number {
  return usage.promptTokens + usage.completionTokens;
}
