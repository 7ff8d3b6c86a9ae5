import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { StoredResponsesRepository } from 'src/modules/responses/stored/stored-responses.repository';

/** Expired answers are never read (reads check expires_at), so an hour late costs only disk. */
const EXPIRY_INTERVAL_MS = 60 * 60_000;
/** Small deletes, each a short transaction, so no single one holds many row locks or a long WAL burst. */
const BATCH = 5_000;

/**
 * The worker's deletion of kept Responses answers past RESPONSES_ITEM_TTL_DAYS (their items go with
 * them), off the request path. Runs when the worker starts and every hour; several workers at once
 * only share the work.
 */
@Injectable()
export class StoredResponsesExpiry implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly repository: StoredResponsesRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    void this.runLogged();
    this.timer = setInterval(() => void this.runLogged(), EXPIRY_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) {
      clearInterval(this.timer);
    }
  }

  /** Deletes every answer expired by `now`, a batch at a time; returns how many. */
  async expire(now = new Date()): Promise<number> {
    let deleted = 0;
    for (let batch = BATCH; batch === BATCH; deleted += batch) {
      batch = await this.repository.deleteExpired(now, BATCH);
    }
    return deleted;
  }

  /** A failed run is logged and retried on the next one. */
  private async runLogged(): Promise<void> {
    try {
      const deleted = await this.expire();
      if (deleted > 0) {
        this.logger.info({ deleted }, 'expired Responses answers deleted');
      }
    } catch (error) {
      this.logger.error({ err: (error as Error).message }, 'deleting expired Responses answers failed; retried later');
    }
  }
}
