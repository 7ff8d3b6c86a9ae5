import { eventually, expectApiError, sleep, userMessages } from 'test/e2e/billing-helpers';
import { throughProxy, TcpProxy } from 'test/e2e/outage-helpers';
import { HttpResult, TestGateway } from 'test/support/gateway';

const CLIENTS = 4;
/** issue 51: the outage the readiness probe must ride out (a probe every 5 s, 2 failures take a pod out). */
const OUTAGE_MS = 15_000;
/** The console must say "retry" this soon after Postgres goes, not hang until a client timeout. */
const CONSOLE_ANSWER_MS = 2_000;

/** `gateway_dependency_up` for `dependency` in a /metrics text. */
const dependencyUp = (metrics: string, dependency: string) =>
  new RegExp(`^gateway_dependency_up\\{dependency="${dependency}"\\} (\\d)$`, 'm').exec(metrics)?.[1];

describe('health: Postgres goes away for 15 s under load', () => {
  let proxy: TcpProxy;
  let gateway: TestGateway;
  let model: string;

  beforeAll(async () => {
    const direct = new URL(process.env.DATABASE_URL!);
    proxy = await TcpProxy.start(Number(direct.port || 5432));
    gateway = await TestGateway.start({ DATABASE_URL: throughProxy(process.env.DATABASE_URL!, proxy) });
    // Far above what the clients send in a minute: no answer of the load is a 429. No worker settles
    // here, so every answer's hold stays on the balance: a small output cap keeps thousands of them
    // far below it, however fast this machine answers.
    model = await gateway.addModel({ rpm: 1_000_000, maxOutputTokens: 16 });
  });
  afterAll(async () => {
    await proxy.restore().catch(() => undefined);
    await gateway.close();
    await proxy.close();
  });

  /** Runs `request` back to back on `concurrency` loops until stop(), keeping every answer. */
  function repeat(request: () => Promise<HttpResult>, concurrency: number, pauseMs = 0) {
    const answers: HttpResult[] = [];
    let running = true;
    const loop = async () => {
      while (running) {
        answers.push(await request());
        if (pauseMs > 0) {
          await sleep(pauseMs);
        }
      }
    };
    const loops = Array.from({ length: concurrency }, loop);
    return {
      answers,
      stop: async () => {
        running = false;
        await Promise.all(loops);
      },
    };
  }

  it('should stay ready and keep serving completions, while the console answers 503 with retry-after', async () => {
    const customer = await gateway.newCustomer({ balance: '100' });
    // Warm: the balance snapshot is in Redis and the key in the API's cache, as for any active customer.
    expect((await gateway.chat(customer.key, { model, messages: userMessages() })).status).toBe(200);
    expect((await gateway.call('GET', '/console/account', { token: customer.token })).status).toBe(200);
    const readyBefore = await gateway.call('GET', '/health/ready');
    expect({ status: readyBefore.status, body: readyBefore.body }).toEqual({
      status: 200,
      body: { status: 'ok', checks: { postgres: 'ok', redis: 'ok', process: 'ok' } },
    });

    // A short pause between a client's requests: the load goes on through the outage without taking
    // the cores from the test files running beside this one.
    const chats = repeat(() => gateway.chat(customer.key, { model, messages: userMessages() }), CLIENTS, 10);
    await proxy.cut();
    const cutAt = Date.now();
    const probes = repeat(() => gateway.call('GET', '/health/ready'), 1, 100);
    try {
      const account = await gateway.call('GET', '/console/account', { token: customer.token });
      const answeredInMs = Date.now() - cutAt;
      expectApiError(account, 503, { type: 'server_error', code: 'server_overloaded' });
      expect(account.headers.get('retry-after')).toBe('10');
      expect(answeredInMs).toBeLessThan(CONSOLE_ANSWER_MS);

      const detail = await gateway.admin('GET', '/admin/health');
      expect(detail.body).toEqual({
        draining: false,
        inFlight: expect.any(Number),
        dependencies: {
          postgres: { up: false, latencyMs: expect.any(Number), error: expect.any(String) },
          redis: { up: true, latencyMs: expect.any(Number), error: null },
        },
      });
      const metrics = await gateway.call('GET', '/metrics');
      expect([dependencyUp(metrics.text, 'postgres'), dependencyUp(metrics.text, 'redis')]).toEqual(['0', '1']);

      await sleep(OUTAGE_MS - (Date.now() - cutAt));
    } finally {
      await probes.stop();
      await chats.stop();
      await proxy.restore();
    }

    // Every readiness probe of the outage said "ready", and showed Postgres as failed.
    const readiness = probes.answers.map((answer) => `${answer.status} ${answer.body.checks?.postgres}`);
    expect(readiness.length).toBeGreaterThan(OUTAGE_MS / 1_000);
    expect(new Set(readiness)).toEqual(new Set(['200 failed']));
    // Completions went on from the Redis snapshot, every one of them.
    const statuses = chats.answers.map((answer) => answer.status);
    expect(statuses.length).toBeGreaterThan(CLIENTS * 10);
    expect(new Set(statuses)).toEqual(new Set([200]));

    // And the console is back once Postgres is.
    const back = await eventually(
      () => gateway.call('GET', '/console/account', { token: customer.token }),
      (answer) => answer.status === 200,
      5_000,
      100,
    );
    expect(back.status).toBe(200);
  }, 60_000);
});
