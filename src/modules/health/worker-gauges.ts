import { Inject, Injectable } from '@nestjs/common';
import { metrics } from 'src/common/metrics/metrics';
import { workerMetrics } from 'src/common/metrics/worker-metrics';
import { mastersOf, RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { LEDGER_VERIFY_REPORT_KEY, parseLedgerVerifyReport } from 'src/modules/ledger/ledger-verify-report';
import { DependencyProbe } from 'src/modules/health/dependency-probe';
import { isNoeviction, parseRedisPersistence } from 'src/modules/health/redis-persistence';

/**
 * The worker's gauges that need a read, refreshed when Prometheus scrapes (never per job): the
 * settlement backlog and its oldest record (one bounded script), Redis's persistence and eviction policy (INFO,
 * of every master) and the last recorded ledger verification (one GET): four round trips to Redis. And whether
 * Postgres and Redis answer (DependencyProbe), each probe bounded on its own.
 */
@Injectable()
export class WorkerGauges {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly usage: UsageQueueService,
    private readonly dependencies: DependencyProbe,
  ) {}

  /** Refreshes every gauge, or leaves them as they were (and counts it) when Redis does not answer in `timeoutMs`. */
  async refresh(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    // gateway_dependency_up beside, with its own bounds: a Postgres that hangs must not keep the Redis gauges stale.
    const probed = this.dependencies.check();
    try {
      await Promise.race([this.read(), deadline]);
    } catch {
      workerMetrics.scrapeFailures.inc();
    } finally {
      clearTimeout(timer);
    }
    await probed;
  }

  private async read(): Promise<void> {
    const [backlog, persistence, memory, verification] = await Promise.all([
      this.usage.backlog(),
      // Every master's: on a cluster each keeps its own slots' holds and usage.
      Promise.all(mastersOf(this.redis).map((node) => node.info('persistence'))),
      Promise.all(mastersOf(this.redis).map((node) => node.info('memory'))),
      this.redis.get(LEDGER_VERIFY_REPORT_KEY),
    ]);
    workerMetrics.settlementBacklog.set(backlog.count);
    workerMetrics.oldestUnsettledSeconds.set(backlog.count > 0 ? (backlog.oldestAgeMs ?? 0) / 1000 : 0);
    const masters = persistence.map(parseRedisPersistence);
    workerMetrics.redisAofEnabled.set(masters.length > 0 && masters.every(({ aofEnabled }) => aofEnabled) ? 1 : 0);
    workerMetrics.redisPersistenceOk.set(masters.every(({ ok }) => ok) ? 1 : 0);
    // The API's start-up check sets the same gauge once (eviction-policy.ts); the worker's is kept fresh.
    metrics.redisNoEviction.set(memory.length > 0 && memory.every(isNoeviction) ? 1 : 0);
    const report = parseLedgerVerifyReport(verification);
    workerMetrics.ledgerVerifyMismatches.set(report?.mismatches ?? 0);
    workerMetrics.ledgerVerifyLastRun.set(report ? report.finishedAtMs / 1000 : 0);
  }
}
