import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { workerMetrics } from 'src/common/metrics/worker-metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import {
  expiredUsagePartitions,
  monthsCovered,
  PARTITIONED_TABLES,
  partitionsAhead,
} from 'src/modules/partitions/month-partitions';
import { PartitionsRepository } from 'src/modules/partitions/partitions.repository';

/** Often enough that a failed run (a lock timeout, Postgres away) is retried well before a month is missing. */
const MAINTENANCE_INTERVAL_MS = 6 * 60 * 60_000;

export interface MaintenanceResult {
  created: string[];
  dropped: string[];
}

/**
 * Keeps the month partitions of the books ahead of time (this month and MONTHS_AHEAD after it), so
 * no insert meets a month without a partition, and drops usage_records detail past
 * USAGE_DETAIL_RETENTION_MONTHS. ledger_entries and the daily rollups are never dropped.
 * Runs when the worker starts and every few hours; several workers at once are safe (advisory lock).
 */
@Injectable()
export class PartitionMaintenanceService implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly repository: PartitionsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Not awaited: the worker starts settling at once (the months it needs exist ahead); a slow or failed run only logs. */
  onApplicationBootstrap(): void {
    void this.runLogged();
    this.timer = setInterval(() => void this.runLogged(), MAINTENANCE_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) {
      clearInterval(this.timer);
    }
  }

  /** Creates the partitions missing ahead of `now` and drops the usage detail past retention. */
  async maintain(now = new Date()): Promise<MaintenanceResult> {
    const { monthsAhead, ...result } = await this.repository.underMaintenanceLock(async (manager) => {
      const created: string[] = [];
      const covered: number[] = [];
      for (const table of PARTITIONED_TABLES) {
        const existing = new Set(await this.repository.partitionsOf(manager, table));
        // Only the missing ones: creating a partition locks the parent, so existing ones are not touched.
        for (const partition of partitionsAhead(table, now).filter((p) => !existing.has(p.name))) {
          await this.repository.create(manager, partition);
          created.push(partition.name);
          existing.add(partition.name);
        }
        covered.push(monthsCovered(table, [...existing], now));
      }
      const retention = this.config.usageDetailRetentionMonths;
      const dropped =
        retention === null
          ? []
          : expiredUsagePartitions(await this.repository.partitionsOf(manager, 'usage_records'), now, retention);
      for (const name of dropped) {
        await this.repository.drop(manager, 'usage_records', name);
      }
      return { created, dropped, monthsAhead: Math.min(...covered) };
    });
    // Once committed, for the alerts: a failed run leaves both as they were, so their age and count tell.
    workerMetrics.partitionMonthsAhead.set(monthsAhead);
    workerMetrics.partitionMaintenanceLastSuccess.set(Date.now() / 1000);
    return result;
  }

  /** A failed run is logged and retried on the next one; months are created well ahead, so one miss is harmless. */
  private async runLogged(): Promise<void> {
    try {
      const { created, dropped } = await this.maintain();
      if (created.length > 0 || dropped.length > 0) {
        this.logger.info({ created, dropped }, 'book partitions maintained');
      }
    } catch (error) {
      this.logger.error(
        { err: (error as Error).message },
        'book partition maintenance failed; retried on the next run',
      );
    }
  }
}
