import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_NODE_FLAGS } from 'src/config/api-runtime';
import {
  assembleImage,
  ImageProcess,
  killImageProcess,
  missingPackages,
  startInImage,
} from 'test/e2e/production-image-helpers';
import { freePort } from 'tools/bench/child-processes';

/**
 * docker/Dockerfile's image, rebuilt without Docker: the product built from what the Dockerfile copies,
 * run on the production dependencies alone. A product file importing a dev dependency fails here.
 */
describe('the production image', () => {
  let dir: string;
  let image: string;
  let api: ImageProcess | null = null;
  let worker: ImageProcess | null = null;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-image-'));
    image = await assembleImage(dir);
  }, 120_000);
  afterEach(async () => {
    await Promise.all([killImageProcess(api), killImageProcess(worker)]);
    api = worker = null;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('should hold every package that a file of dist/ requires', () => {
    expect(missingPackages(image)).toEqual([]);
  });

  it('should start the API and the worker as compose does, answer readiness, and stop both on SIGTERM with exit 0', async () => {
    const [port, workerMetricsPort] = await Promise.all([freePort(), freePort()]);
    // What docker/compose.yaml sets, on this run's database (migrated) and Redis db.
    const env = {
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: process.env.DATABASE_URL!,
      REDIS_URL: process.env.REDIS_URL!,
      ADMIN_TOKEN: randomBytes(24).toString('hex'),
      JWT_SECRET: randomBytes(48).toString('base64'),
      SECRETS_KEY: randomBytes(32).toString('base64'),
    };
    [api, worker] = await Promise.all([
      startInImage(image, [...API_NODE_FLAGS, 'dist/main.js'], env, 'api listening'),
      startInImage(
        image,
        ['dist/worker.js'],
        { ...env, WORKER_METRICS_PORT: String(workerMetricsPort) },
        'worker ready',
      ),
    ]);

    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect({ status: ready.status, body: await ready.text() }).toMatchObject({ status: 200 });
    // The worker's probe and scrape, as deploy/k8s and compose use them.
    const workerHealth = await fetch(`http://127.0.0.1:${workerMetricsPort}/health`);
    expect(workerHealth.status).toBe(200);
    const workerMetrics = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
    expect(workerMetrics).toMatch(/^gateway_settlement_backlog \d+$/m);

    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect({ api: await api.exited, worker: await worker.exited }).toEqual({ api: 0, worker: 0 });
  });
});
