import { eventually } from 'test/e2e/e2e-helpers';
import {
  admissionEstimate,
  ApiProcess,
  awayFromWindowEdge,
  expectRateLimited,
  mockTokens,
  rateLimitHeaders,
  sleep,
  userMessages,
} from 'test/e2e/rate-limits-helpers';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { CatalogService } from 'src/modules/models/catalog.service';
import { Customer, HttpResult, TestGateway } from 'test/support/gateway';

/**
 * Limits hold for the deployment, not per process: one API process in this test process and one
 * real `src/main.ts` child process, both on the run's database and Redis, count against the same windows.
 */
describe('rate limits across two API processes', () => {
  let gateway: TestGateway;
  let other: ApiProcess;

  beforeAll(async () => {
    [gateway, other] = await Promise.all([TestGateway.start(), ApiProcess.start()]);
  }, 60_000);
  afterAll(async () => {
    await other?.stop();
    await gateway?.close();
  });

  type Target = 'local' | 'child';
  const send = (target: Target, key: string, body: Record<string, unknown>): Promise<HttpResult> =>
    target === 'local' ? gateway.chat(key, body) : other.chat(key, body);

  /** A model both processes serve: the child learns of it over the invalidation bus. */
  async function sharedModel(options: Parameters<TestGateway['addModel']>[0], customer: Customer): Promise<string> {
    const model = await gateway.addModel(options);
    const listed = await eventually(
      () => other.call('GET', '/v1/models', { token: customer.key }),
      (response) => response.status === 200 && response.body.data.some((entry: { id: string }) => entry.id === model),
      5_000,
      50,
    );
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).toContain(model);
    return model;
  }

  it('should be a second, separate process that is ready', async () => {
    const ready = await other.call('GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(other.child.pid).not.toBe(process.pid);
  });

  it('should share requests per minute: 3 calls over both processes pass, the 4th to either is a 429', async () => {
    const customer = await gateway.newCustomer();
    const model = await sharedModel({ rpm: 3 }, customer);
    const upstreamBefore = gateway.mock.requests.length;

    const served: HttpResult[] = [];
    for (const target of ['local', 'child', 'local'] as const) {
      served.push(await send(target, customer.key, { model, messages: userMessages() }));
    }

    expect(served.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(served.map((response) => rateLimitHeaders(response, 'requests'))).toEqual(
      ['2', '1', '0'].map((remaining) => ({ limit: '3', remaining, reset: expect.stringMatching(/^\d+s$/) })),
    );
    for (const target of ['child', 'local'] as const) {
      const limited = await send(target, customer.key, { model, messages: userMessages() });
      const retryAfter = expectRateLimited(limited, {
        model,
        limit: 'requests per minute',
        max: 3,
        used: 3,
        requested: 1,
      });
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(rateLimitHeaders(limited, 'requests')).toMatchObject({ limit: '3', remaining: '0' });
    }
    expect(gateway.mock.requests.length).toBe(upstreamBefore + 3);
  });

  it('should count a streaming request on one process against the other one’s window', async () => {
    const customer = await gateway.newCustomer();
    const model = await sharedModel({ rpm: 2 }, customer);

    const first = await send('child', customer.key, { model, messages: userMessages(), stream: true });
    const second = await send('local', customer.key, { model, messages: userMessages(), stream: true });
    const third = await send('child', customer.key, { model, messages: userMessages(), stream: true });

    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect(second.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expectRateLimited(third, { model, limit: 'requests per minute', max: 2, used: 2, requested: 1 });
  });

  it('should share tokens per minute: one process sees the real usage of a request the other served', async () => {
    const customer = await gateway.newCustomer();
    const tpm = 200;
    const model = await sharedModel({ tpm, maxOutputTokens: 1000 }, customer);
    const messages = userMessages();
    const estimate = admissionEstimate(messages, 20);
    const used = mockTokens(messages);
    await awayFromWindowEdge(60_000, 5_000);

    const first = await send('child', customer.key, { model, messages, max_tokens: 20 });
    expect(first.status).toBe(200);
    expect(first.body.usage.total_tokens).toBe(used);
    expect(rateLimitHeaders(first, 'tokens')).toEqual({
      limit: String(tpm),
      remaining: String(tpm - estimate),
      reset: expect.stringMatching(/^\d+s$/),
    });
    // The correction to real usage follows the response at once; give it a moment.
    await sleep(200);

    const second = await send('local', customer.key, { model, messages, max_tokens: 20 });
    expect(second.status).toBe(200);
    expect(second.headers.get('x-ratelimit-remaining-tokens')).toBe(String(tpm - used - estimate));
    await sleep(200);

    // Room left: tpm - 2 × used; a request whose estimate is one token more is refused.
    const promptEstimate = admissionEstimate(messages, 0);
    const big = tpm - 2 * used - promptEstimate + 1;
    const refused = await send('child', customer.key, { model, messages, max_tokens: big });
    expectRateLimited(refused, {
      model,
      limit: 'tokens per minute',
      max: tpm,
      used: 2 * used,
      requested: admissionEstimate(messages, big),
    });
  });

  it('should apply an override set through one process on the other, and its removal too', async () => {
    const customer = await gateway.newCustomer();
    const model = await sharedModel({ rpm: 100 }, customer);
    const policy = gateway.app.get(RateLimitPolicy);
    const catalogModel = gateway.app.get(CatalogService).get(model)!;

    const put = await gateway.admin('PUT', `/admin/accounts/${customer.accountId}/rate-limits/${model}`, { rpm: 1 });
    expect(put.status).toBe(200);
    // The bus delivers to every process at about the same moment; this process is the witness.
    await eventually(
      () => Promise.resolve(policy.limitsFor(customer.accountId, catalogModel).rpm),
      (rpm) => rpm === 1,
      3_000,
    );
    await sleep(300);

    expect((await send('child', customer.key, { model, messages: userMessages() })).status).toBe(200);
    expectRateLimited(await send('child', customer.key, { model, messages: userMessages() }), {
      model,
      limit: 'requests per minute',
      max: 1,
      used: 1,
      requested: 1,
    });

    const removed = await other.call('DELETE', `/admin/accounts/${customer.accountId}/rate-limits/${model}`, {
      token: gateway.adminToken,
    });
    expect(removed.status).toBe(204);
    await eventually(
      () => Promise.resolve(policy.limitsFor(customer.accountId, catalogModel).rpm),
      (rpm) => rpm === 100,
      3_000,
    );

    const again = await send('local', customer.key, { model, messages: userMessages() });
    expect(again.status).toBe(200);
    expect(rateLimitHeaders(again, 'requests')).toMatchObject({ limit: '100', remaining: '98' });
  });
});
