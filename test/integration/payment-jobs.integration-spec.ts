import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { AppConfig } from 'src/config/app-config';
import { PaymentJobs } from 'src/modules/payments/payment-jobs';

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
  const redisUrl = process.env.REDIS_URL!;
  // A queue of this suite's own, so no worker of the gateway takes its jobs.
  const name = `payment-jobs-${randomUUID()}`;
  let redis: Redis;
  let queue: Queue;
  let worker: Worker;
  const producers: PaymentJobs[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    queue = new Queue(name, { connection: { url: redisUrl }, prefix: 'gateway' });
    // Confirms at once, as the worker does when Postgres answers.
    worker = new Worker(name, () => Promise.resolve('credited'), {
      connection: { url: redisUrl },
      prefix: 'gateway',
      concurrency: 50,
    });
    await worker.waitUntilReady();
  });
  afterAll(async () => {
    await Promise.all(producers.map((producer) => producer.onModuleDestroy()));
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await redis.quit();
  });

  it('should hear of a job that finishes while its first wait is still starting to listen', async () => {
    const config = { redisUrl } as AppConfig;
    // Each round is a process's first waits (a fresh producer) on jobs the worker finishes within
    // milliseconds: about when the producer's event connection starts to listen.
    let slowest = 0;
    for (let round = 0; round < ROUNDS && slowest < HEARD_WITHIN_MS; round++) {
      const producer = new PaymentJobs(queue, redis, config);
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
