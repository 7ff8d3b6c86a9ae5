import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { writesNow } from 'src/common/redis/one-write';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { SettlementBatchService, SettlementResult } from 'src/modules/billing/settlement-batch.service';
import { reportSettlement, spentOf } from 'src/modules/billing/settlement.service';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';

/** Closing the hold is tried once, this long: Redis just failed, and the hold sweeper closes it otherwise. */
const CLOSE_HOLD_DEADLINE_MS = 1_000;

/**
 * The API's way around Redis for a usage record Redis did not take: settlement's own transaction,
 * for one usage. Usage records are keyed by request id, so a record that did reach Redis after all
 * is found settled when a worker claims it, and charged nothing again.
 */
@Injectable()
export class UsageFallbackService {
  constructor(
    private readonly batch: SettlementBatchService,
    private readonly usage: UsageQueueService,
    private readonly gate: BalanceGateService,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Settles in Postgres (rejects when that fails), then closes the hold with the new balance if Redis lets it. */
  async settle(usage: SettleCompletionPayload): Promise<void> {
    const result = await this.batch.settle([usage]);
    reportSettlement(this.logger, result);
    await this.closeHold(usage, result).catch((error: Error) =>
      // Until then the hold keeps the charged amount unspendable, so the stale snapshot allows no overspending.
      this.logger.warn(
        { reqId: usage.requestId, accountId: usage.accountId, err: error.message },
        'usage settled in Postgres, its hold not closed yet; the hold sweeper closes it',
      ),
    );
  }

  /** The hold and any recorded copy of the usage close together, and the balances and key spend it moved are pushed. */
  private async closeHold(usage: SettleCompletionPayload, { snapshots, keySpent }: SettlementResult): Promise<void> {
    if (!writesNow(this.redis)) {
      throw new Error('Redis is not connected');
    }
    const { accountId, requestId } = usage;
    const closing = Promise.all([
      this.usage.releaseMany([
        { accountId, requestId, snapshot: snapshots.get(accountId), keySpent: spentOf(keySpent, usage.keyId) },
      ]),
      ...[...snapshots].filter(([id]) => id !== accountId).map(([id, snapshot]) => this.gate.sync(id, snapshot)),
    ]);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no reply within ${CLOSE_HOLD_DEADLINE_MS} ms`)),
        CLOSE_HOLD_DEADLINE_MS,
      );
    });
    try {
      await Promise.race([closing, late]);
    } finally {
      clearTimeout(timer);
      void closing.catch(() => undefined);
    }
  }
}
