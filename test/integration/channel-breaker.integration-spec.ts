import { randomUUID } from 'node:crypto';
import { createRedis, RedisClient } from 'src/common/redis/redis-client';
import { InvalidationBus } from 'src/common/redis/invalidation-bus';
import { AppConfig, loadConfig } from 'src/config/app-config';
import { ChannelEntity } from 'src/modules/channels/channel.entity';
import { ChannelsRepository } from 'src/modules/channels/channels.repository';
import { ChannelBreaker, ProbeLease } from 'src/modules/channels/health/channel-breaker.service';
import { eventually } from 'test/e2e/e2e-helpers';
import { TestDb } from 'test/integration/integration-helpers';
import { newTestLogger } from 'test/support/test-service';

/** One API process's breaker: its own Redis connection, pub/sub subscriber and logger. */
interface Process {
  redis: RedisClient;
  bus: InvalidationBus;
  breaker: ChannelBreaker;
  logger: ReturnType<typeof newTestLogger>;
}

/**
 * Two breakers on the run's Redis, as two API processes would have: failures counted at once from
 * both are never lost (the versioned compare-and-set), a breaker opens once, and one probe goes out.
 */
describe(ChannelBreaker.name, () => {
  let db: TestDb;
  const processes: Process[] = [];

  async function start(config: AppConfig): Promise<Process> {
    const redis = createRedis(config.redis);
    const logger = newTestLogger();
    const bus = new InvalidationBus(redis, config, logger);
    const channels = new ChannelsRepository(db.dataSource.getRepository(ChannelEntity));
    const breaker = new ChannelBreaker(redis, bus, channels, config, logger);
    await breaker.onModuleInit();
    const started = { redis, bus, breaker, logger };
    processes.push(started);
    return started;
  }

  const configWith = (env: Record<string, string>) =>
    loadConfig({ ...process.env, NODE_ENV: 'test', BREAKER_OPEN_MS: '200', ...env });
  const failure = { kind: 'error' as const, error: 'status 500', retryAfterMs: 0 };
  const channel = () => ({ id: `breaker-${randomUUID().slice(0, 8)}`, autoDisableAfterHours: null });
  const logged = (message: string, channelId: string) =>
    processes
      .flatMap(({ logger }) => [...logger.warn.mock.calls, ...logger.info.mock.calls])
      .filter(([fields, text]) => text === message && (fields as { channel?: string }).channel === channelId);

  beforeAll(async () => {
    db = await TestDb.open();
  });
  afterEach(async () => {
    for (const { breaker, bus, redis } of processes.splice(0)) {
      breaker.onModuleDestroy();
      await bus.onModuleDestroy();
      await redis.quit();
    }
  });
  afterAll(() => db.close());

  it('should count every one of 40 failures sent at once from two processes', async () => {
    const config = configWith({ BREAKER_FAILURES: '1000' });
    const [a, b] = [await start(config), await start(config)];
    const target = channel();

    await Promise.all(
      Array.from({ length: 40 }, (_, index) => (index % 2 ? a : b).breaker.failed(target, failure, null)),
    );

    const stored = (await a.breaker.health([target.id])).get(target.id)!;
    expect(stored).toMatchObject({ state: 'closed', failures: 40, lastError: 'status 500' });
    expect(a.logger.error).not.toHaveBeenCalled();
    expect(b.logger.error).not.toHaveBeenCalled();
  });

  it('should open once when failures from both processes reach the limit, and both should then skip it', async () => {
    const config = configWith({ BREAKER_FAILURES: '5' });
    const [a, b] = [await start(config), await start(config)];
    const target = channel();

    await Promise.all(
      Array.from({ length: 12 }, (_, index) => (index % 2 ? a : b).breaker.failed(target, failure, null)),
    );

    expect((await a.breaker.health([target.id])).get(target.id)).toMatchObject({ state: 'open', opens: 1 });
    expect(logged('channel breaker opened', target.id)).toHaveLength(1);
    await eventually(
      () => Promise.resolve(b.breaker.gate(target.id)),
      (gate) => gate === 'skip',
      2_000,
    );
    expect([a.breaker.gate(target.id), b.breaker.gate(target.id)]).toEqual(['skip', 'skip']);
  });

  it('should hand out exactly one probe among many asking at once from both processes', async () => {
    const config = configWith({ BREAKER_FAILURES: '1' });
    const [a, b] = [await start(config), await start(config)];
    const target = channel();
    await a.breaker.failed(target, failure, null);
    // Open for BREAKER_OPEN_MS (200 ms); after it, both processes offer the probe.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await eventually(
      () => Promise.resolve(b.breaker.gate(target.id)),
      (gate) => gate === 'probe',
      2_000,
    );
    expect([a.breaker.gate(target.id), b.breaker.gate(target.id)]).toEqual(['probe', 'probe']);

    const leases = await Promise.all(
      Array.from({ length: 10 }, (_, index) => (index % 2 ? a : b).breaker.takeProbe(target.id, 5_000)),
    );

    const taken = leases.filter((lease): lease is ProbeLease => lease !== null && lease !== 'closed');
    expect(taken).toHaveLength(1);
    expect(leases.filter((lease) => lease === null)).toHaveLength(9);
    expect((await a.breaker.health([target.id])).get(target.id)?.state).toBe('half_open');

    await a.breaker.succeeded(target.id, taken[0]);
    expect((await b.breaker.health([target.id])).get(target.id)).toMatchObject({ state: 'closed', failures: 0 });
    await eventually(
      () => Promise.resolve(b.breaker.gate(target.id)),
      (gate) => gate === 'pass',
      2_000,
    );
    expect(b.breaker.gate(target.id)).toBe('pass');
  });
});
