import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { AccountRateLimitEntity, WILDCARD_MODEL } from 'src/modules/rate-limits/account-rate-limit.entity';
import { RateLimitsRepository } from 'src/modules/rate-limits/rate-limits.repository';

/** A model's default limits; rate-limits reads no more of the catalog, so the catalog may read the limits. */
export interface ModelDefaults {
  id: string;
  rpm: number;
  tpm: number;
}

export interface EffectiveLimits {
  rpm: number;
  tpm: number;
  endUserRpm: number | null;
  endUserTpm: number | null;
}

const RELOAD_INTERVAL_MS = 30_000;

/** An account group's default limits (null: the model's own). */
export interface GroupDefaults {
  rpm: number | null;
  tpm: number | null;
}

const NO_GROUP_DEFAULTS: GroupDefaults = { rpm: null, tpm: null };

/**
 * The limits that apply to an account on a model, from memory: the operator's override for the
 * account on the model, else its override on every model, else its group's default, else the model's.
 */
@Injectable()
export class RateLimitPolicy implements OnModuleInit, OnModuleDestroy {
  private overrides = new Map<string, AccountRateLimitEntity>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: RateLimitsRepository,
    private readonly bus: InvalidationBus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.reload();
    this.bus.on(InvalidationTopic.RateLimits, () => void this.reload());
    this.timer = setInterval(() => void this.reload(), RELOAD_INTERVAL_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /**
   * `model` is what the catalog says of it: its id and default limits (the catalog's model fits);
   * `group`, the account's group's defaults (the key's principal carries them).
   */
  limitsFor(accountId: string, model: ModelDefaults, group: GroupDefaults = NO_GROUP_DEFAULTS): EffectiveLimits {
    const own = this.overrides.get(`${accountId}|${model.id}`);
    const wildcard = this.overrides.get(`${accountId}|${WILDCARD_MODEL}`);
    return {
      rpm: own?.rpm ?? wildcard?.rpm ?? group.rpm ?? model.rpm,
      tpm: own?.tpm ?? wildcard?.tpm ?? group.tpm ?? model.tpm,
      endUserRpm: own?.endUserRpm ?? wildcard?.endUserRpm ?? null,
      endUserTpm: own?.endUserTpm ?? wildcard?.endUserTpm ?? null,
    };
  }

  async reload(): Promise<void> {
    try {
      const rows = await this.repository.listAll();
      this.overrides = new Map(rows.map((row) => [`${row.accountId}|${row.modelId}`, row]));
    } catch (error) {
      this.logger.error({ err: (error as Error).message }, 'rate-limit overrides reload failed; keeping the last ones');
    }
  }
}
