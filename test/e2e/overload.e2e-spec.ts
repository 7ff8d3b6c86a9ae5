import { ShutdownState } from 'src/modules/health/shutdown.state';
import { awayFromWindowEdge, mockTokens, admissionEstimate, sleep, userMessages } from 'test/e2e/rate-limits-helpers';
import { Customer, HttpResult, TestGateway } from 'test/support/gateway';

interface Timed {
  response: HttpResult;
  ms: number;
}

/**
 * The 503 (docs/errors.md, "Statuses"): each API process relays a bounded number of completions at once (with a short
 * bounded queue); past that it answers 503 server_overloaded at once instead of slowing everyone down.
 */
describe('overload', () => {
  const messages = userMessages();

  /** Sends `count` completions at the same moment; each with its own latency. */
  function burst(gateway: TestGateway, customer: Customer, model: string, count: number, latencyMs: number) {
    return Promise.all(
      Array.from({ length: count }, async (): Promise<Timed> => {
        const started = performance.now();
        const response = await gateway.chat(customer.key, {
          model,
          messages,
          max_tokens: 10,
          mock: { latency_ms: latencyMs },
        });
        return { response, ms: performance.now() - started };
      }),
    );
  }

  const expectOverloaded = (response: HttpResult) => {
    expect({ status: response.status, body: response.body }).toEqual({
      status: 503,
      body: {
        error: { message: expect.any(String), type: 'server_error', code: 'server_overloaded', param: null },
      },
    });
    expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  };

  describe('without a queue (MAX_CONCURRENT_COMPLETIONS 3, MAX_QUEUED_COMPLETIONS 0)', () => {
    let gateway: TestGateway;
    let customer: Customer;

    beforeAll(async () => {
      gateway = await TestGateway.start({ MAX_CONCURRENT_COMPLETIONS: '3', MAX_QUEUED_COMPLETIONS: '0' });
      customer = await gateway.newCustomer();
    });
    afterAll(() => gateway?.close());

    it('should serve 3 of a burst of 10 at full speed and answer the other 7 with a quick 503', async () => {
      const model = await gateway.addModel({ rpm: 1000 });
      // Warm the connection pool, the catalog and the balance cache so that timings measure the limiter.
      expect((await gateway.chat(customer.key, { model, messages })).status).toBe(200);
      const upstreamBefore = gateway.mock.requests.length;

      const results = await burst(gateway, customer, model, 10, 1000);

      const served = results.filter((result) => result.response.status === 200);
      const refused = results.filter((result) => result.response.status !== 200);
      expect(served).toHaveLength(3);
      expect(refused).toHaveLength(7);
      refused.forEach((result) => expectOverloaded(result.response));
      // Refused at once, long before the upstream could have answered...
      for (const result of refused) {
        expect(result.ms).toBeLessThan(300);
      }
      // ...and the admitted ones are not slowed down: about the upstream's latency.
      for (const result of served) {
        expect(result.ms).toBeGreaterThanOrEqual(990);
        expect(result.ms).toBeLessThan(1500);
      }
      expect(gateway.mock.requests.length).toBe(upstreamBefore + 3);
    });

    it('should free the slots when requests end', async () => {
      const model = await gateway.addModel({ rpm: 1000 });
      const first = await burst(gateway, customer, model, 3, 200);
      expect(first.map((result) => result.response.status)).toEqual([200, 200, 200]);

      const second = await burst(gateway, customer, model, 3, 200);
      expect(second.map((result) => result.response.status)).toEqual([200, 200, 200]);
    });

    it('should free the slot of a request that failed upstream', async () => {
      const model = await gateway.addModel({ rpm: 1000 });
      const failed = await Promise.all(
        Array.from({ length: 3 }, () => gateway.chat(customer.key, { model, messages, mock: { status: 500 } })),
      );
      expect(failed.map((response) => response.status)).toEqual([500, 500, 500]);

      const results = await burst(gateway, customer, model, 3, 100);
      expect(results.map((result) => result.response.status)).toEqual([200, 200, 200]);
    });

    it('should count no tokens for a request refused with 503', async () => {
      const tpm = 100_000;
      const model = await gateway.addModel({ tpm, maxOutputTokens: 1000 });
      await awayFromWindowEdge(60_000, 8_000);

      const results = await burst(gateway, customer, model, 10, 500);
      expect(results.filter((result) => result.response.status === 200)).toHaveLength(3);
      await sleep(200);

      const after = await gateway.chat(customer.key, { model, messages, max_tokens: 10 });
      expect(after.status).toBe(200);
      expect(after.headers.get('x-ratelimit-remaining-tokens')).toBe(
        String(tpm - 3 * mockTokens(messages) - admissionEstimate(messages, 10)),
      );
    });

    it('should report not ready while draining, and ready again after', async () => {
      const state = gateway.app.get(ShutdownState);
      expect((await gateway.call('GET', '/health/ready')).status).toBe(200);
      state.draining = true;
      try {
        const ready = await gateway.call('GET', '/health/ready');
        expect({ status: ready.status, body: ready.body }).toEqual({
          status: 503,
          body: { status: 'unavailable', checks: { postgres: 'ok', redis: 'ok', process: 'draining' } },
        });
        expect((await gateway.call('GET', '/health/live')).status).toBe(200);
      } finally {
        state.draining = false;
      }
      const again = await gateway.call('GET', '/health/ready');
      expect({ status: again.status, body: again.body }).toEqual({
        status: 200,
        body: { status: 'ok', checks: { postgres: 'ok', redis: 'ok', process: 'ok' } },
      });
    });
  });

  describe('with a queue (MAX_CONCURRENT_COMPLETIONS 3, MAX_QUEUED_COMPLETIONS 5, QUEUE_WAIT_MS 5000)', () => {
    let gateway: TestGateway;
    let customer: Customer;
    let model: string;
    const LATENCY = 600;

    beforeAll(async () => {
      gateway = await TestGateway.start({
        MAX_CONCURRENT_COMPLETIONS: '3',
        MAX_QUEUED_COMPLETIONS: '5',
        QUEUE_WAIT_MS: '5000',
      });
      customer = await gateway.newCustomer();
      model = await gateway.addModel({ rpm: 1000 });
      expect((await gateway.chat(customer.key, { model, messages })).status).toBe(200);
    });
    afterAll(() => gateway?.close());

    it('should serve queued requests once the first ones finish', async () => {
      const results = await burst(gateway, customer, model, 8, LATENCY);

      expect(results.map((result) => result.response.status)).toEqual(Array(8).fill(200));
      const durations = results.map((result) => result.ms).sort((a, b) => a - b);
      // 3 at once; then 3 that waited for those; then 2 that waited for the next ones.
      for (const ms of durations.slice(0, 3)) {
        expect(ms).toBeLessThan(LATENCY * 1.5);
      }
      for (const ms of durations.slice(3, 6)) {
        expect(ms).toBeGreaterThanOrEqual(LATENCY * 2 - 20);
        expect(ms).toBeLessThan(LATENCY * 2.5);
      }
      for (const ms of durations.slice(6)) {
        expect(ms).toBeGreaterThanOrEqual(LATENCY * 3 - 20);
      }
    });

    it('should answer 503 at once past the queue: 3 running + 5 queued of 10, 2 refused', async () => {
      const upstreamBefore = gateway.mock.requests.length;

      const results = await burst(gateway, customer, model, 10, LATENCY);

      const refused = results.filter((result) => result.response.status !== 200);
      expect(results.filter((result) => result.response.status === 200)).toHaveLength(8);
      expect(refused).toHaveLength(2);
      for (const result of refused) {
        expectOverloaded(result.response);
        expect(result.ms).toBeLessThan(300);
      }
      expect(gateway.mock.requests.length).toBe(upstreamBefore + 8);
    });
  });

  describe('with a short queue wait (MAX_CONCURRENT_COMPLETIONS 1, QUEUE_WAIT_MS 300)', () => {
    let gateway: TestGateway;

    beforeAll(async () => {
      gateway = await TestGateway.start({
        MAX_CONCURRENT_COMPLETIONS: '1',
        MAX_QUEUED_COMPLETIONS: '5',
        QUEUE_WAIT_MS: '300',
      });
    });
    afterAll(() => gateway?.close());

    it('should answer 503 to a request that waited QUEUE_WAIT_MS without getting a slot', async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel({ rpm: 1000 });
      expect((await gateway.chat(customer.key, { model, messages })).status).toBe(200);

      const results = await burst(gateway, customer, model, 3, 1200);

      const refused = results.filter((result) => result.response.status !== 200);
      expect(results.filter((result) => result.response.status === 200)).toHaveLength(1);
      expect(refused).toHaveLength(2);
      for (const result of refused) {
        expectOverloaded(result.response);
        expect(result.ms).toBeGreaterThanOrEqual(280);
        expect(result.ms).toBeLessThan(800);
      }
      // The timed-out waiters left the queue: the slot goes to the next request.
      expect((await gateway.chat(customer.key, { model, messages })).status).toBe(200);
    });
  });
});
