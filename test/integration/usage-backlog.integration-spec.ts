import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { claimEmptyRedisDb } from 'test/support/global-setup';

/**
 * UsageQueueService.backlog, which the worker's /metrics reads at each scrape, on a real Redis: a
 * database of its own, since earlier files may leave usage recorded in the run's, which would move
 * the counts and ages asserted here.
 */
describe(`${UsageQueueService.name}.backlog`, () => {
  let redis: Redis;
  let sut: UsageQueueService;
  const recorded: { accountId: string; requestId: string }[] = [];

  beforeAll(async () => {
    const runUrl = new URL(process.env.REDIS_URL!);
    runUrl.pathname = `/${await claimEmptyRedisDb()}`;
    redis = new Redis(runUrl.toString());
    sut = new UsageQueueService(redis);
  });

  afterEach(async () => {
    // Settled, so later files find only their own usage in the index.
    await sut.releaseMany(recorded.splice(0));
  });

  afterAll(async () => {
    await redis.flushdb();
    await redis.quit();
  });

  async function record(recordedAtMs?: number): Promise<void> {
    const usage = { accountId: randomUUID(), requestId: `req_${randomUUID()}` };
    await sut.recordUsage(usage.accountId, usage.requestId, JSON.stringify({ ...usage, recordedAtMs }));
    recorded.push(usage);
  }

  it('should count every waiting record and age the oldest by its recording time', async () => {
    const before = await sut.backlog();
    await record(Date.now() - 1_000);
    await record(Date.now() - 5_000);
    // A record of an earlier version, without a recording time: counted, never aged.
    await record();

    const { count, oldestAgeMs } = await sut.backlog();
    expect(count).toBe(before.count + 3);
    expect(oldestAgeMs).toBeGreaterThanOrEqual(4_900);
    expect(oldestAgeMs).toBeLessThan(60_000);
  });

  it('should still see the oldest once it is claimed (its score moved to the end of the index)', async () => {
    await record(Date.now() - 8_000);
    for (let index = 0; index < 1_100; index++) {
      await record(Date.now());
    }
    // Claims the oldest (first by score) among others, moving them a lease into the future.
    await sut.claimUsage(10, 60_000);

    const { count, oldestAgeMs } = await sut.backlog();
    expect(count).toBeGreaterThanOrEqual(1_101);
    expect(oldestAgeMs).toBeGreaterThanOrEqual(7_900);
  }, 30_000);

  it('should say nothing of the age when no waiting record carries a recording time', async () => {
    expect(await sut.backlog()).toEqual({ count: 0, oldestAgeMs: null });
    await record();
    expect(await sut.backlog()).toEqual({ count: 1, oldestAgeMs: null });
  });
});
