import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { QueueName } from 'src/common/queue/queue.constants';
import { isNoeviction, parseRedisPersistence } from 'src/modules/health/redis-persistence';
import { Books, eventually, sleep, userMessages } from 'test/e2e/billing-helpers';
import { freePort } from 'test/support/free-port';
import { claimEmptyRedisDb } from 'test/support/global-setup';
import { spawnEntrypoint } from 'test/support/entrypoint-process';
import { TestGateway } from 'test/support/gateway';
import { spawnWorker, stopWorker } from 'test/support/worker-process';

const SETTLE_TIMEOUT_MS = 20_000;

/** One sample of an exposition, or NaN when the line is absent. */
const sample = (text: string, series: string) => {
  const escaped = series.replace(/[{}"=,.]/g, (char) => `\\${char}`);
  return Number(new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
};

describe('the worker process: /metrics and /health on WORKER_METRICS_PORT', () => {
  let gateway: TestGateway;
  let books: Books;
  let worker: ChildProcess | null = null;
  let base: string;
  // A Redis database of its own: usage other files leave unsettled in the run's database (recorded
  // for accounts that exist only in their Redis, say) would stay in this worker's backlog and age.
  let redisUrl: string;

  beforeAll(async () => {
    const own = new URL(process.env.REDIS_URL!);
    own.pathname = `/${await claimEmptyRedisDb()}`;
    redisUrl = own.toString();
    gateway = await TestGateway.start({ REDIS_URL: redisUrl });
    books = await Books.open(gateway);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    worker = await spawnWorker({ WORKER_METRICS_PORT: String(port), REDIS_URL: redisUrl });
  }, 90_000);
  afterAll(async () => {
    await stopWorker(worker, 'SIGTERM');
    await books.close();
    await gateway.close();
    const redis = new Redis(redisUrl);
    await redis.flushdb();
    redis.disconnect();
  });

  const scrape = async () => {
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    return response.text();
  };

  it('should answer its liveness probe, and 404 elsewhere', async () => {
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${base}/nothing-here`)).status).toBe(404);
  });

  it('should answer readiness with its dependencies, and export them', async () => {
    const ready = await fetch(`${base}/health/ready`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({
      status: 200,
      body: { status: 'ok', checks: { postgres: 'ok', redis: 'ok' } },
    });
    const text = await scrape();
    expect([
      sample(text, 'gateway_dependency_up{dependency="postgres"}'),
      sample(text, 'gateway_dependency_up{dependency="redis"}'),
    ]).toEqual([1, 1]);
  });

  it('should show recorded usage as backlog and age while it cannot settle, and neither once it has', async () => {
    const idle = await eventually(
      scrape,
      (text) => sample(text, 'gateway_settlement_backlog') === 0,
      SETTLE_TIMEOUT_MS,
    );
    expect(sample(idle, 'gateway_settlement_oldest_unsettled_seconds')).toBe(0);
    const settledBefore = sample(idle, 'gateway_settlement_batch_seconds_count{outcome="settled"}') || 0;

    const model = await gateway.addModel({ inputPrice: '2', outputPrice: '8' });
    const customer = await gateway.newCustomer({ balance: '5' });
    const before = await books.balance(customer);
    // The account's row held by another transaction: the worker's settlement waits, then gives up and retries.
    const locker = new Client({ connectionString: process.env.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [customer.accountId]);
      const response = await gateway.chat(customer.key, { model, messages: userMessages('Wait for me') });
      expect(response.status).toBe(200);

      const waiting = await eventually(scrape, (text) => sample(text, 'gateway_settlement_backlog') === 1);
      expect(sample(waiting, 'gateway_settlement_backlog')).toBe(1);
      await sleep(1_500);
      const older = await scrape();
      expect(sample(older, 'gateway_settlement_backlog')).toBe(1);
      expect(sample(older, 'gateway_settlement_oldest_unsettled_seconds')).toBeGreaterThanOrEqual(1.4);
      expect(sample(older, 'gateway_settlement_oldest_unsettled_seconds')).toBeLessThan(30);
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }

    // The backlog empties at the release, inside the batch; its timer is observed once the batch ends.
    const settled = await eventually(
      scrape,
      (text) =>
        sample(text, 'gateway_settlement_backlog') === 0 &&
        sample(text, 'gateway_settlement_batch_seconds_count{outcome="settled"}') > settledBefore,
      SETTLE_TIMEOUT_MS,
    );
    expect(sample(settled, 'gateway_settlement_backlog')).toBe(0);
    expect(sample(settled, 'gateway_settlement_oldest_unsettled_seconds')).toBe(0);
    expect(sample(settled, 'gateway_settlement_batch_seconds_count{outcome="settled"}')).toBeGreaterThan(settledBefore);
    expect(sample(settled, 'gateway_settlement_batch_size_count')).toBeGreaterThan(0);
    expect(await books.balance(customer)).toBeLessThan(before);
    expect(settled).not.toContain(customer.key);
  }, 60_000);

  it('should count a failed job under its queue', async () => {
    const before = sample(await scrape(), 'gateway_worker_job_failures_total{queue="billing"}') || 0;
    const queue = gateway.app.get<Queue>(getQueueToken(QueueName.Billing));
    // A job name the billing worker has no handler for: its attempt fails.
    await queue.add('no-such-job', {}, { removeOnFail: true, removeOnComplete: true });

    const after = await eventually(
      scrape,
      (text) => sample(text, 'gateway_worker_job_failures_total{queue="billing"}') > before,
      SETTLE_TIMEOUT_MS,
    );
    expect(sample(after, 'gateway_worker_job_failures_total{queue="billing"}')).toBe(before + 1);
  });

  it("should report Redis's persistence and eviction policy as INFO tells them", async () => {
    const redis = new Redis(redisUrl);
    try {
      const persistence = parseRedisPersistence(await redis.info('persistence'));
      const text = await scrape();
      expect(sample(text, 'gateway_redis_aof_enabled')).toBe(persistence.aofEnabled ? 1 : 0);
      expect(sample(text, 'gateway_redis_persistence_ok')).toBe(persistence.ok ? 1 : 0);
      expect(sample(text, 'gateway_redis_noeviction')).toBe(isNoeviction(await redis.info('memory')) ? 1 : 0);
    } finally {
      redis.disconnect();
    }
  });

  it('should export the result of the last `ledger:verify --record`', async () => {
    const startedAt = Date.now() / 1000;
    const verify = spawnEntrypoint('bin/ledger-verify', { REDIS_URL: redisUrl }, ['--record']);
    const code = await verify.exited;
    if (code !== 0) {
      throw new Error(`ledger:verify exited with ${code}:\n${verify.output()}`);
    }

    const text = await scrape();
    expect(sample(text, 'gateway_ledger_verify_mismatches')).toBe(0);
    expect(sample(text, 'gateway_ledger_verify_last_run_timestamp_seconds')).toBeGreaterThanOrEqual(
      Math.floor(startedAt),
    );
  }, 40_000);
});
