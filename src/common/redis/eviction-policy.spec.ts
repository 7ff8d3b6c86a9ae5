import { metricsRegistry } from 'src/common/metrics/metrics';
import { EvictionPolicyCheck, parseMaxmemoryPolicy } from 'src/common/redis/eviction-policy';
import { RedisClient } from 'src/common/redis/redis-client';
import { Logger } from 'pino';

const memoryInfo = (policy: string) => ['# Memory', 'used_memory:1000', `maxmemory_policy:${policy}`, ''].join('\r\n');
const gauge = async () => (await metricsRegistry.getSingleMetric('gateway_redis_noeviction')!.get()).values[0]?.value;

describe(EvictionPolicyCheck.name, () => {
  const redis = { info: jest.fn() };
  const logger = { warn: jest.fn() };
  const sut = new EvictionPolicyCheck(redis as unknown as RedisClient, logger as unknown as Logger);

  beforeEach(() => jest.clearAllMocks());

  it('should read the policy of an INFO memory answer', () => {
    expect(parseMaxmemoryPolicy(memoryInfo('noeviction'))).toBe('noeviction');
    expect(parseMaxmemoryPolicy('# Memory\r\nused_memory:1\r\n')).toBeNull();
  });

  it('should be content with noeviction', async () => {
    redis.info.mockResolvedValue(memoryInfo('noeviction'));

    await sut.check();

    expect(await gauge()).toBe(1);
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it('should warn and set the gauge to 0 when Redis may evict keys', async () => {
    redis.info.mockResolvedValue(memoryInfo('allkeys-lru'));

    await sut.check();

    expect(await gauge()).toBe(0);
    expect(logger.warn).toHaveBeenCalledWith(
      { maxmemoryPolicy: ['allkeys-lru'] },
      expect.stringContaining('noeviction'),
    );
  });

  it('should only warn when Redis cannot be asked: the start goes on', async () => {
    redis.info.mockRejectedValue(new Error('connect ECONNREFUSED'));

    await expect(sut.check()).resolves.toBeUndefined();
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });
});
