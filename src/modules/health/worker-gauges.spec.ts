import { workerScrapeRegistry } from 'src/common/metrics/worker-metrics';
import { REDIS } from 'src/common/redis/redis.tokens';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { WorkerGauges } from 'src/modules/health/worker-gauges';
import { newTestService } from 'test/support/test-service';

/** The current value of an unlabelled gauge or counter the worker's scrape shows. */
const valueOf = async (name: string) => (await workerScrapeRegistry.getSingleMetric(name)!.get()).values[0]?.value;

describe(WorkerGauges.name, () => {
  const redis = { info: jest.fn(), get: jest.fn() };
  let sut: WorkerGauges;
  let usage: jest.Mocked<UsageQueueService>;

  beforeEach(async () => {
    const test = await newTestService(WorkerGauges, {}, [[REDIS, redis]]);
    sut = test.sut;
    usage = test.mock(UsageQueueService);
    usage.backlog.mockResolvedValue({ count: 3, oldestAgeMs: 4_500 });
    redis.info.mockImplementation((section: string) =>
      Promise.resolve(
        section === 'memory'
          ? '# Memory\r\nmaxmemory:0\r\nmaxmemory_policy:allkeys-lru\r\n'
          : '# Persistence\r\naof_enabled:0\r\naof_last_write_status:ok\r\n',
      ),
    );
    redis.get.mockResolvedValue(JSON.stringify({ finishedAtMs: 1_700_000_000_000, mismatches: 2 }));
  });

  it('should set every gauge from one read of Redis', async () => {
    await sut.refresh(1_000);

    expect(await valueOf('gateway_settlement_backlog')).toBe(3);
    expect(await valueOf('gateway_settlement_oldest_unsettled_seconds')).toBe(4.5);
    expect(await valueOf('gateway_redis_aof_enabled')).toBe(0);
    expect(await valueOf('gateway_redis_persistence_ok')).toBe(1);
    expect(await valueOf('gateway_redis_noeviction')).toBe(0);
    expect(await valueOf('gateway_ledger_verify_mismatches')).toBe(2);
    expect(await valueOf('gateway_ledger_verify_last_run_timestamp_seconds')).toBe(1_700_000_000);
  });

  it('should say 0 of the age when nothing waits, and "never ran" without a recorded verification', async () => {
    usage.backlog.mockResolvedValue({ count: 0, oldestAgeMs: null });
    redis.get.mockResolvedValue(null);

    await sut.refresh(1_000);

    expect(await valueOf('gateway_settlement_oldest_unsettled_seconds')).toBe(0);
    expect(await valueOf('gateway_ledger_verify_last_run_timestamp_seconds')).toBe(0);
  });

  it('should keep the last values and count the failure when Redis does not answer in time', async () => {
    await sut.refresh(1_000);
    const failures = (await valueOf('gateway_worker_scrape_failures_total')) ?? 0;
    usage.backlog.mockReturnValue(new Promise(() => undefined));

    const started = Date.now();
    await sut.refresh(50);

    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await valueOf('gateway_worker_scrape_failures_total')).toBe(failures + 1);
    expect(await valueOf('gateway_settlement_backlog')).toBe(3);
  });
});
