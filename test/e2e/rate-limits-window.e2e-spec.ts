import { eventually } from 'test/e2e/e2e-helpers';
import {
  admissionEstimate,
  awayFromWindowEdge,
  expectRateLimited,
  rateLimitHeaders,
  sleep,
  userMessages,
} from 'test/e2e/rate-limits-helpers';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { CatalogService } from 'src/modules/models/catalog.service';
import { TestGateway } from 'test/support/gateway';

/** RATE_LIMIT_WINDOW_MS shortens "per minute" so that a test can see a window reset. */
const WINDOW_MS = 2000;

describe('rate-limit windows reset', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await TestGateway.start({ RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) });
  });
  afterAll(() => gateway?.close());

  const messages = userMessages();

  it('should serve again once the requests window has passed', async () => {
    const model = await gateway.addModel({ rpm: 2 });
    const customer = await gateway.newCustomer();
    const send = () => gateway.chat(customer.key, { model, messages });

    const served = [await send(), await send()];
    expect(served.map((response) => response.status)).toEqual([200, 200]);
    expect(rateLimitHeaders(served[0], 'requests')).toEqual({ limit: '2', remaining: '1', reset: '2s' });
    const limited = await send();
    const retryAfter = expectRateLimited(limited, {
      model,
      limit: 'requests per minute',
      max: 2,
      used: 2,
      requested: 1,
    });
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(rateLimitHeaders(limited, 'requests')).toEqual({
      limit: '2',
      remaining: '0',
      reset: expect.stringMatching(/^[12]s$/),
    });
    const upstreamBefore = gateway.mock.requests.length;

    // Still refused within the window.
    expect((await send()).status).toBe(429);
    await sleep(retryAfter * 1000 + 100);

    const again = await send();
    expect(again.status).toBe(200);
    expect(rateLimitHeaders(again, 'requests')).toMatchObject({ limit: '2', remaining: '1' });
    expect(gateway.mock.requests.length).toBe(upstreamBefore + 1);
  });

  it('should serve again once the tokens window has passed', async () => {
    const tpm = 100;
    const model = await gateway.addModel({ tpm, maxOutputTokens: 1000 });
    const customer = await gateway.newCustomer();
    await awayFromWindowEdge(WINDOW_MS, 1_000);

    const served = await gateway.chat(customer.key, { model, messages, max_tokens: 50 });
    expect(served.status).toBe(200);
    expect(rateLimitHeaders(served, 'tokens')).toEqual({
      limit: String(tpm),
      remaining: String(tpm - admissionEstimate(messages, 50)),
      reset: expect.stringMatching(/^[12]s$/),
    });
    const limited = await gateway.chat(customer.key, { model, messages, max_tokens: 85 });
    const retryAfter = expectRateLimited(limited, {
      model,
      limit: 'tokens per minute',
      max: tpm,
      requested: admissionEstimate(messages, 85),
    });
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    await sleep(retryAfter * 1000 + 100);

    const again = await gateway.chat(customer.key, { model, messages, max_tokens: 85 });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-ratelimit-remaining-tokens')).toBe(String(tpm - admissionEstimate(messages, 85)));
  });

  it('should reset an end user’s window too', async () => {
    const model = await gateway.addModel({ rpm: 100 });
    const customer = await gateway.newCustomer();
    const override = await gateway.admin('PUT', `/admin/accounts/${customer.accountId}/rate-limits/${model}`, {
      endUserRpm: 1,
    });
    expect(override.status).toBe(200);
    const catalogModel = gateway.app.get(CatalogService).get(model)!;
    await eventually(
      () => Promise.resolve(gateway.app.get(RateLimitPolicy).limitsFor(customer.accountId, catalogModel).endUserRpm),
      (endUserRpm) => endUserRpm === 1,
      3_000,
    );
    const send = () => gateway.chat(customer.key, { model, messages, user: 'carol' });

    expect((await send()).status).toBe(200);
    const retryAfter = expectRateLimited(await send(), {
      model,
      limit: 'requests per minute',
      max: 1,
      used: 1,
      endUser: 'carol',
    });
    await sleep(retryAfter * 1000 + 100);

    expect((await send()).status).toBe(200);
  });
});
