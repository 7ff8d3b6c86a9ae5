import { randomUUID } from 'node:crypto';
import { ConnectionOptions, Queue, Worker } from 'bullmq';
import { QUEUE_PREFIX, queueConnectionOf } from 'src/common/queue/queue-connection';
import { RedisClient } from 'src/common/redis/redis-client';
import { PaymentJobs } from 'src/modules/payments/confirmation/payment-jobs';
import { testRedis, testRedisTarget } from 'test/support/test-redis';

const EVIDENCE = {
  provider: 'alipay',
  tradeNo: '2026000000000000000000000001',
  amount: '72.00',
  rawStatus: 'TRADE_SUCCESS',
};
const ROUNDS = 40;
const NOTIFICATIONS = 5;
const HEARD_WITHIN_MS = 3_000;

describe('PaymentJobs: waiting for the worker', () => {
  // A queue of this suite's own, so no worker of the gateway takes its jobs.
  const name = `payment-jobs-${randomUUID()}`;
  let redis: RedisClient;
  let connection: ConnectionOptions;
  let queue: Queue;
  let worker: Worker;
  const producers: PaymentJobs[] = [];

  beforeAll(async () => {
    redis = testRedis();
    // As the gateway connects its queues: a shared client on a cluster, options on one Redis.
    connection = queueConnectionOf(testRedisTarget());
    queue = new Queue(name, { connection, prefix: QUEUE_PREFIX });
    // Confirms at once, as the worker does when Postgres answers.
    worker = new Worker(name, () => Promise.resolve('credited'), {
      connection,
      prefix: QUEUE_PREFIX,
      concurrency: 50,
    });
    await worker.waitUntilReady();
  });
  afterAll(async () => {
    await Promise.all(producers.map((producer) => producer.onModuleDestroy()));
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await (connection as Partial<RedisClient>).quit?.();
    await redis.quit();
  });

  it('should hear of a job that finishes while its first wait is still starting to listen', async () => {
    // Each round is a process's first waits (a fresh producer) on jobs the worker finishes within
    // milliseconds: about when the producer's event connection starts to listen.
    let slowest = 0;
    for (let round = 0; round < ROUNDS && slowest < HEARD_WITHIN_MS; round++) {
      const producer = new PaymentJobs(queue, redis);
      producers.push(producer);
      const started = Date.now();
      await Promise.all(Array.from({ length: NOTIFICATIONS }, () => producer.confirmAndWait(randomUUID(), EVIDENCE)));
      slowest = Math.max(slowest, Date.now() - started);
    }

    // A missed completion holds its waiter for the whole wait (seconds); heard ones end in milliseconds.
    expect(slowest).toBeLessThan(HEARD_WITHIN_MS);
    expect(await queue.getJobCounts('completed')).toEqual({ completed: ROUNDS * NOTIFICATIONS });
  }, 30_000);
});
