import { randomUUID } from 'node:crypto';
import { AccountRegistry } from 'src/common/redis/account-registry';
import { accountSlot } from 'src/common/redis/key-slots';
import { RedisClient } from 'src/common/redis/redis-client';
import { testRedis } from 'test/support/test-redis';

/**
 * The registry of accounts with work (open holds, recorded usage) on the run's Redis: a worker that
 * found an account empty drops it only if nobody listed it again since it read the list.
 */
describe(AccountRegistry.name, () => {
  let redis: RedisClient;
  // A registry of this file's own, so no worker of another file reads or empties it.
  const key = `gw:{gw}:test-registry:${randomUUID()}`;
  let sut: AccountRegistry;

  beforeAll(() => {
    redis = testRedis();
    sut = new AccountRegistry(redis, key);
  });
  afterAll(async () => {
    await redis.del(key);
    await redis.quit();
  });

  const listedIds = async () => (await sut.listed()).map(({ accountId }) => accountId).sort();

  it('should drop an account read empty, but keep one listed again after the read', async () => {
    const [quiet, busy] = [randomUUID(), randomUUID()];
    await sut.register(quiet);
    await sut.register(busy);
    const read = await sut.listed();

    // Work of `busy` written and announced after the worker's read, before its removal.
    await sut.register(busy);
    await Promise.all(
      read.filter(({ accountId }) => accountId === quiet || accountId === busy).map((one) => sut.deregister(one)),
    );

    expect(await listedIds()).toEqual([busy]);
  });

  it('should list again every account that has keys matching the pattern (the repair)', async () => {
    const accountId = randomUUID();
    const marker = `${accountSlot(accountId)}:test-registry-work`;
    await redis.set(marker, '1');
    try {
      expect(await sut.repair('gw:{*}:test-registry-work')).toBeGreaterThanOrEqual(1);
      expect(await listedIds()).toContain(accountId);
    } finally {
      await redis.del(marker);
    }
  });
});
