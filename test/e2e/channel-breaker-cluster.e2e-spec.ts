import pino from 'pino';
import { eventually } from 'test/e2e/e2e-helpers';
import { ApiProcess, exchange, killApiProcess, startApiProcess } from 'test/e2e/api-process-helpers';
import { expectApiError, userMessage } from 'test/e2e/v1-helpers';
import { Customer, TestGateway } from 'test/support/gateway';

// Long enough that the checks between the breaker opening and the next requests fit in it on a busy
// machine (test files run side by side), short enough to wait out in the probe tests.
const OPEN_MS = 2_000;
// Both processes share the breaker's settings: open for 2 s (whole seconds: retry-after counts them), doubling up to 8 s.
const ENV = { BREAKER_FAILURES: '5', BREAKER_OPEN_MS: String(OPEN_MS), BREAKER_MAX_OPEN_MS: '8000' };

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: any; text: string };
type Target = 'local' | 'child';

/**
 * The breaker is the deployment's, not a process's: one API process in this test process and one real
 * `src/main.ts` child, on the run's Postgres and Redis, count failures, open, probe and close together.
 */
describe('channel breaker across two API processes', () => {
  let gateway: TestGateway;
  let child: ApiProcess;
  let customer: Customer;
  const localLog: string[] = [];

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => localLog.push(line) });
    [gateway, child] = await Promise.all([
      TestGateway.start(ENV, logger),
      startApiProcess({ ...ENV, LOG_LEVEL: 'info' }),
    ]);
    customer = await gateway.newCustomer({ balance: '10' });
  }, 60_000);
  afterAll(async () => {
    await killApiProcess(child);
    await gateway?.close();
  });

  async function chat(target: Target, model: string, extra: Record<string, unknown> = {}): Promise<Answer> {
    const body = { model, messages: userMessage(), ...extra };
    if (target === 'local') {
      const response = await gateway.chat(customer.key, body);
      return { ...response, headers: Object.fromEntries(response.headers.entries()) };
    }
    const answer = await exchange(child.url, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${customer.key}` },
      body,
    });
    if ('error' in answer) {
      throw new Error(`the child process did not answer: ${answer.error}`);
    }
    return answer;
  }

  /** Upstream requests that reached the channel whose base URL path starts with `prefix`. */
  const sentTo = (prefix: string) => gateway.mock.requests.filter((request) => request.path.startsWith(prefix)).length;

  /** A model whose first route (priority 10) is `baseUrl` and whose second is healthy; both processes serve it. */
  async function modelWithBackup(name: string, baseUrl: string, timeouts?: Record<string, number>): Promise<string> {
    await gateway.admin('PUT', `/admin/channels/${name}`, {
      type: 'openai',
      baseUrl,
      apiKey: 'upstream-secret-key-0123456789',
      priority: 10,
      timeouts,
    });
    await gateway.addChannel(`${name}-backup`, { baseUrl: `${gateway.mock.url}/v1`, priority: 0 });
    return shared(
      await gateway.addModel({
        routes: [
          { channelId: name, upstreamModel: 'mock-gpt' },
          { channelId: `${name}-backup`, upstreamModel: 'mock-gpt' },
        ],
      }),
    );
  }

  /** A model with one route only. */
  async function soleRouteModel(name: string, baseUrl: string, timeouts?: Record<string, number>): Promise<string> {
    const put = await gateway.admin('PUT', `/admin/channels/${name}`, {
      type: 'openai',
      baseUrl,
      apiKey: 'upstream-secret-key-0123456789',
      timeouts,
    });
    expect(put.status).toBe(200);
    return shared(await gateway.addModel({ routes: [{ channelId: name, upstreamModel: 'mock-gpt' }] }));
  }

  /** Waits until the child serves the model too (it learns of it over the invalidation bus). */
  async function shared(model: string): Promise<string> {
    const listed = await eventually(
      () => exchange(child.url, { path: '/v1/models', headers: { authorization: `Bearer ${customer.key}` } }),
      (answer) => 'body' in answer && answer.body.data?.some((entry: { id: string }) => entry.id === model),
      5_000,
      50,
    );
    expect('body' in listed && listed.body.data.map((entry: { id: string }) => entry.id)).toContain(model);
    return model;
  }

  async function health(channelId: string) {
    const listed = await gateway.admin('GET', '/admin/channels');
    return listed.body.data.find((channel: { id: string }) => channel.id === channelId).health;
  }

  /** Waits until the child's view of the channel's breaker is `state`, through its /metrics gauge. */
  async function childSees(channelId: string, state: 0 | 1 | 2): Promise<void> {
    const line = `gateway_channel_breaker_state{channel="${channelId}"} ${state}`;
    const metrics = await eventually(
      () => exchange(child.url, { path: '/metrics' }),
      (answer) => 'text' in answer && answer.text.includes(line),
      5_000,
      20,
    );
    expect('text' in metrics && metrics.text).toContain(line);
  }

  /** Structured log lines of both processes with this message about this channel. */
  function logged(message: string, channelId: string): unknown[] {
    const lines = [...localLog, ...child.output().split('\n')];
    return lines
      .filter((line) => line.includes(`"msg":"${message}"`))
      .map((line) => JSON.parse(line) as { channel: string })
      .filter((entry) => entry.channel === channelId);
  }

  async function waitUntilOpenEnds(channelId: string): Promise<void> {
    const { openUntil } = await health(channelId);
    const wait = Date.parse(openUntil) - Date.now() + 50;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
  }

  it('should open after five failures over both processes and send the very next request to route 2', async () => {
    gateway.mock.failing.add('five');
    const model = await modelWithBackup('five', `${gateway.mock.url}/flaky/five/v1`);

    const answers: Answer[] = [];
    for (const target of ['local', 'child', 'local', 'child', 'local'] as const) {
      answers.push(await chat(target, model));
    }

    // Each request failed over to the backup within itself; the fifth failure opened the breaker.
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(sentTo('/flaky/five/')).toBe(5);
    expect(await health('five')).toMatchObject({ state: 'open', consecutiveFailures: 5, lastError: 'status 503' });
    await childSees('five', 2);

    const sixth = await chat('child', model);
    const seventh = await chat('local', model);

    expect([sixth.status, seventh.status]).toEqual([200, 200]);
    expect(sentTo('/flaky/five/')).toBe(5);
    expect(logged('channel breaker opened', 'five')).toHaveLength(1);
    gateway.mock.failing.delete('five');
  });

  it('should let exactly one probe through after the open time, over both processes, and close on its success', async () => {
    gateway.mock.failing.add('probe');
    const model = await modelWithBackup('probe', `${gateway.mock.url}/flaky/probe/v1`);
    for (let index = 0; index < 5; index++) {
      await chat(index % 2 === 0 ? 'local' : 'child', model);
    }
    await childSees('probe', 2);
    gateway.mock.failing.delete('probe');
    await waitUntilOpenEnds('probe');

    // Twelve requests at once, each held 300 ms by the upstream so the probe is still out when the others route.
    const targets: Target[] = Array.from({ length: 12 }, (_, index) => (index % 2 === 0 ? 'local' : 'child'));
    const answers = await Promise.all(targets.map((target) => chat(target, model, { mock: { latency_ms: 300 } })));

    expect(answers.map((answer) => answer.status)).toEqual(targets.map(() => 200));
    expect(sentTo('/flaky/probe/')).toBe(5 + 1);
    // The probe's success is written beside its answer, not before it (CompletionRelay.succeeded).
    const closed = await eventually(
      () => health('probe'),
      (state) => state.state === 'closed',
      2_000,
      20,
    );
    expect(closed).toMatchObject({ state: 'closed', consecutiveFailures: 0, openUntil: null });
    await childSees('probe', 0);
    const after = await chat('child', model);
    expect(after.status).toBe(200);
    expect(sentTo('/flaky/probe/')).toBe(5 + 2);
    expect(logged('channel breaker half-open', 'probe')).toHaveLength(1);
    expect(logged('channel breaker closed', 'probe')).toHaveLength(1);
  });

  it('should follow a flapping upstream: open, a failed probe reopens for twice as long, a good probe closes', async () => {
    gateway.mock.failing.add('flap');
    const model = await modelWithBackup('flap', `${gateway.mock.url}/flaky/flap/v1`);
    for (let index = 0; index < 5; index++) {
      await chat(index % 2 === 0 ? 'child' : 'local', model);
    }
    const opened = await health('flap');
    expect(Date.parse(opened.openUntil) - Date.now()).toBeLessThanOrEqual(OPEN_MS);

    // Still failing when probed: reopened, now for 2 s.
    await waitUntilOpenEnds('flap');
    expect((await chat('child', model)).status).toBe(200);
    expect(sentTo('/flaky/flap/')).toBe(6);
    const reopened = await health('flap');
    expect(reopened.state).toBe('open');
    const reopenedFor = Date.parse(reopened.openUntil) - Date.now();
    expect(reopenedFor).toBeGreaterThan(OPEN_MS);
    expect(reopenedFor).toBeLessThanOrEqual(2 * OPEN_MS);
    await childSees('flap', 2);
    expect((await chat('local', model)).status).toBe(200);
    expect(sentTo('/flaky/flap/')).toBe(6);

    // Healthy again when next probed: closed, and traffic returns to it.
    gateway.mock.failing.delete('flap');
    await waitUntilOpenEnds('flap');
    expect((await chat('local', model)).status).toBe(200);
    expect(sentTo('/flaky/flap/')).toBe(7);
    expect(await health('flap')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    await childSees('flap', 0);
    expect((await chat('child', model)).status).toBe(200);
    expect(sentTo('/flaky/flap/')).toBe(8);

    expect(logged('channel breaker opened', 'flap')).toHaveLength(2);
    expect(logged('channel breaker half-open', 'flap')).toHaveLength(2);
    expect(logged('channel breaker closed', 'flap')).toHaveLength(1);
  });

  it("should close the breaker from the operator's channel test once the upstream answers", async () => {
    gateway.mock.failing.add('tested');
    const model = await modelWithBackup('tested', `${gateway.mock.url}/flaky/tested/v1`);
    for (let index = 0; index < 5; index++) {
      await chat('local', model);
    }
    await childSees('tested', 2);

    const failing = await gateway.admin('POST', '/admin/channels/tested/test', {});
    expect(failing.status).toBe(200);
    expect(failing.body).toEqual({
      ok: false,
      status: 503,
      latencyMs: expect.any(Number),
      firstByteMs: expect.any(Number),
      error: expect.stringMatching(/^status 503/),
    });
    expect(failing.body.error).not.toContain('127.0.0.1');
    expect((await health('tested')).state).toBe('open');

    gateway.mock.failing.delete('tested');
    const passing = await gateway.admin('POST', '/admin/channels/tested/test', { model: 'mock-gpt-tested' });

    expect(passing.status).toBe(200);
    expect(passing.body).toEqual({
      ok: true,
      status: 200,
      latencyMs: expect.any(Number),
      firstByteMs: expect.any(Number),
    });
    const sent = gateway.mock.requests.at(-1)!;
    expect(sent.body).toEqual({
      model: 'mock-gpt-tested',
      messages: [{ role: 'user', content: 'ping' }],
      max_tokens: 1,
    });
    expect(await health('tested')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    await childSees('tested', 0);
    const before = sentTo('/flaky/tested/');
    expect((await chat('child', model)).status).toBe(200);
    expect(sentTo('/flaky/tested/')).toBe(before + 1);
  });

  describe('every route open: an answer at once, without trying them', () => {
    async function openWithFiveFailures(model: string): Promise<Answer[]> {
      const answers: Answer[] = [];
      for (let index = 0; index < 5; index++) {
        answers.push(await chat(index % 2 === 0 ? 'local' : 'child', model));
      }
      return answers;
    }

    it('should answer 502 with retry-after when the channel was unreachable (a hang past its first-byte timeout)', async () => {
      const model = await soleRouteModel('all-hang', `${gateway.mock.url}/hang/v1`, { firstByteMs: 200 });
      const failures = await openWithFiveFailures(model);
      expect(failures.map((answer) => answer.status)).toEqual([502, 502, 502, 502, 502]);
      await childSees('all-hang', 2);
      const sent = sentTo('/hang/');

      const startedAt = Date.now();
      const answer = await chat('child', model);

      expect(Date.now() - startedAt).toBeLessThan(150);
      expect(answer.status).toBe(502);
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(OPEN_MS / 1000);
      expect(sentTo('/hang/')).toBe(sent);
    });

    it("should answer 503 server_overloaded at capacity, never sooner than the upstream's retry-after", async () => {
      gateway.mock.errorHeaders = { 'retry-after': '4' };
      try {
        const model = await soleRouteModel('all-429', `${gateway.mock.url}/status/429/v1`);
        const failures = await openWithFiveFailures(model);
        expect(failures.map((answer) => answer.status)).toEqual([503, 503, 503, 503, 503]);
        await childSees('all-429', 2);
        const sent = sentTo('/status/429/');

        const answer = await chat('child', model);

        const body = { ...answer, headers: new Headers(answer.headers as Record<string, string>) };
        expectApiError(body, 503, { type: 'server_error', code: 'server_overloaded', param: null });
        expect(Number(answer.headers['retry-after'])).toBeGreaterThan(OPEN_MS / 1000);
        expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(4);
        expect(sentTo('/status/429/')).toBe(sent);
      } finally {
        gateway.mock.errorHeaders = {};
      }
    });

    it('should answer 500 server_error with retry-after when the channel answered 5xx', async () => {
      const model = await soleRouteModel('all-500', `${gateway.mock.url}/status/500/v1`);
      await openWithFiveFailures(model);
      await childSees('all-500', 2);
      const sent = sentTo('/status/500/');

      const answer = await chat('child', model);

      const body = { ...answer, headers: new Headers(answer.headers as Record<string, string>) };
      expectApiError(body, 500, { type: 'server_error', code: null, param: null });
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(sentTo('/status/500/')).toBe(sent);
    });
  });
});
