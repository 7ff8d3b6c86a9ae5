import { Books } from 'test/e2e/billing-helpers';
import { eventually } from 'test/e2e/e2e-helpers';
import {
  admissionEstimate,
  awayFromWindowEdge,
  expectRateLimited,
  mockTokens,
  rateLimitHeaders,
  sleep,
  userMessages,
} from 'test/e2e/rate-limits-helpers';
import { Customer, HttpResult, parseEventStream, TestGateway, TestWorker } from 'test/support/gateway';

const WINDOW_MS = 60_000;
const MAX_OUTPUT = 1000;

/**
 * Tokens per minute (docs/errors.md, "Limits"): a request is admitted with an estimate (prompt
 * estimate + max output × n) and the count is corrected to the usage the upstream reported once the
 * request ends. Refused requests neither reach the upstream nor cost anything.
 */
describe('tokens per minute', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    worker = await TestWorker.start();
    books = await Books.open(gateway);
  });
  afterAll(async () => {
    await books?.close();
    await worker?.close();
    await gateway?.close();
  });
  // Every test compares counts over several requests: keep them in one aligned window.
  beforeEach(() => awayFromWindowEdge(WINDOW_MS, 8_000));

  const messages = userMessages();
  const chat = (customer: Customer, model: string, extra: Record<string, unknown> = {}) =>
    gateway.chat(customer.key, { model, messages, ...extra });

  /**
   * The tokens counted in the account's window, read without counting any: a request whose estimate is
   * larger than any limit is refused with a 429 naming the `used` count.
   */
  async function tokensUsed(customer: Customer, model: string): Promise<number> {
    const probe = await chat(customer, model, { max_tokens: MAX_OUTPUT });
    expect(probe.status).toBe(429);
    return Number(/used (\d+)/.exec(probe.body.error.message)![1]);
  }

  /** Polls until the correction to real usage landed (it follows the response at once). */
  const waitForUsed = (customer: Customer, model: string, expected: number) =>
    eventually(
      () => tokensUsed(customer, model),
      (used) => used === expected,
      3_000,
      50,
    );

  it('should admit with the estimate and report it in the x-ratelimit-*-tokens headers', async () => {
    const tpm = 900;
    const model = await gateway.addModel({ tpm, maxOutputTokens: MAX_OUTPUT });
    const customer = await gateway.newCustomer();

    const response = await chat(customer, model, { max_tokens: 50 });

    expect(response.status).toBe(200);
    expect(rateLimitHeaders(response, 'tokens')).toEqual({
      limit: String(tpm),
      remaining: String(tpm - admissionEstimate(messages, 50)),
      reset: expect.stringMatching(/^([1-9]|[1-5]\d|60)s$/),
    });
    expect(rateLimitHeaders(response, 'requests')).toEqual({
      limit: '1000',
      remaining: '999',
      reset: expect.stringMatching(/^\d+s$/),
    });
  });

  it('should count the real usage, not the estimate, once a request ends', async () => {
    const tpm = 900;
    const model = await gateway.addModel({ tpm, maxOutputTokens: MAX_OUTPUT });
    const customer = await gateway.newCustomer();
    const reply = 'alpha beta gamma';

    const first = await chat(customer, model, { max_tokens: 50, mock: { reply } });
    expect(first.status).toBe(200);
    const real = mockTokens(messages, 3);
    expect(first.body.usage).toEqual({ prompt_tokens: 8, completion_tokens: 3, total_tokens: real });
    expect(first.headers.get('x-ratelimit-remaining-tokens')).toBe(String(tpm - admissionEstimate(messages, 50)));

    expect(await waitForUsed(customer, model, real)).toBe(real);

    const second = await chat(customer, model, { max_tokens: 50, mock: { reply } });
    expect(second.status).toBe(200);
    // Not tpm - 2 × estimate: the first request counts with what it really used.
    expect(second.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(tpm - real - admissionEstimate(messages, 50)),
    );
    expect(await waitForUsed(customer, model, 2 * real)).toBe(2 * real);
  });

  it("should estimate with the model's maxOutputTokens when max_tokens is absent, times n", async () => {
    const tpm = 5000;
    const model = await gateway.addModel({ tpm, maxOutputTokens: 300 });
    const customer = await gateway.newCustomer();

    const single = await gateway.chat(customer.key, { model, messages });
    expect(single.status).toBe(200);
    expect(single.headers.get('x-ratelimit-remaining-tokens')).toBe(String(tpm - admissionEstimate(messages, 300)));
    await sleep(200);

    const double = await gateway.chat(customer.key, { model, messages, n: 2, max_tokens: 100 });
    expect(double.status).toBe(200);
    expect(double.body.choices).toHaveLength(2);
    expect(double.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(tpm - mockTokens(messages) - admissionEstimate(messages, 100, 2)),
    );
  });

  it('should correct a streaming request to the usage of its stream', async () => {
    const tpm = 900;
    const model = await gateway.addModel({ tpm, maxOutputTokens: MAX_OUTPUT });
    const customer = await gateway.newCustomer();

    const streamed = await chat(customer, model, { stream: true, max_tokens: 40, mock: { reply: 'one two' } });

    expect(streamed.status).toBe(200);
    expect(parseEventStream(streamed.text).done).toBe(true);
    expect(rateLimitHeaders(streamed, 'tokens')).toMatchObject({
      limit: String(tpm),
      remaining: String(tpm - admissionEstimate(messages, 40)),
    });
    expect(await waitForUsed(customer, model, mockTokens(messages, 2))).toBe(mockTokens(messages, 2));
  });

  it('should refuse a request whose estimate exceeds the tokens left, naming tokens per minute and the estimate', async () => {
    const tpm = 200;
    const model = await gateway.addModel({ tpm, maxOutputTokens: MAX_OUTPUT });
    const customer = await gateway.newCustomer();
    expect((await chat(customer, model, { max_tokens: 20 })).status).toBe(200);
    const real = mockTokens(messages);
    await waitForUsed(customer, model, real);
    const upstreamBefore = gateway.mock.requests.length;

    // Exactly what is left fits; one token more does not.
    const promptEstimate = admissionEstimate(messages, 0);
    const tooBig = tpm - real - promptEstimate + 1;
    const refused = await chat(customer, model, { max_tokens: tooBig });

    const retryAfter = expectRateLimited(refused, {
      model,
      limit: 'tokens per minute',
      max: tpm,
      used: real,
      requested: admissionEstimate(messages, tooBig),
    });
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(gateway.mock.requests.length).toBe(upstreamBefore);

    // The refused request counted nothing: the largest request that fits is still admitted.
    const fits = await chat(customer, model, { max_tokens: tooBig - 1 });
    expect(fits.status).toBe(200);
    expect(fits.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
  });

  it('should refuse a request larger than the whole limit even in an empty window', async () => {
    const tpm = 100;
    const model = await gateway.addModel({ tpm, maxOutputTokens: MAX_OUTPUT });
    const customer = await gateway.newCustomer();
    const upstreamBefore = gateway.mock.requests.length;

    const refused = await chat(customer, model, { max_tokens: 500 });

    expectRateLimited(refused, {
      model,
      limit: 'tokens per minute',
      max: tpm,
      used: 0,
      requested: admissionEstimate(messages, 500),
    });
    expect(gateway.mock.requests.length).toBe(upstreamBefore);
  });

  it('should give the estimate back when the upstream fails', async () => {
    const tpm = 900;
    const model = await gateway.addModel({ tpm, maxOutputTokens: MAX_OUTPUT });
    const customer = await gateway.newCustomer();

    const failed = await chat(customer, model, { max_tokens: 100, mock: { status: 500 } });
    expect(failed.status).toBe(500);

    // Nothing was generated, so nothing counts against the minute (as the 403 and 503 paths do).
    expect(await waitForUsed(customer, model, 0)).toBe(0);
  });

  it('should give the estimate back when the balance cannot cover the request', async () => {
    const tpm = 900;
    const model = await gateway.addModel({ tpm, maxOutputTokens: MAX_OUTPUT });
    const customer = await gateway.newCustomer({ balance: '0' });

    const refused = await chat(customer, model, { max_tokens: 100 });
    expect(refused.status).toBe(403);

    expect(await waitForUsed(customer, model, 0)).toBe(0);
  });

  it('should neither relay nor bill requests refused for tokens or requests per minute', async () => {
    const tpmModel = await gateway.addModel({ tpm: 100, maxOutputTokens: MAX_OUTPUT });
    const rpmModel = await gateway.addModel({ rpm: 1 });
    const customer = await gateway.newCustomer();
    const served: HttpResult[] = [
      await chat(customer, tpmModel, { max_tokens: 20 }),
      await chat(customer, rpmModel, { max_tokens: 20 }),
    ];
    expect(served.map((response) => response.status)).toEqual([200, 200]);
    await books.waitForBills(customer, 2);
    await books.waitForNoHolds(customer.accountId);
    const balance = await books.balance(customer);
    const upstreamBefore = gateway.mock.requests.length;

    const refused: HttpResult[] = [];
    for (let i = 0; i < 3; i++) {
      refused.push(await chat(customer, tpmModel, { max_tokens: 100 }));
      refused.push(await chat(customer, rpmModel, { max_tokens: 20 }));
      refused.push(await chat(customer, rpmModel, { max_tokens: 20, stream: true }));
    }

    expect(refused.map((response) => response.status)).toEqual(Array(9).fill(429));
    expect(gateway.mock.requests.length).toBe(upstreamBefore);
    // Whatever the worker would bill, it bills within this wait.
    await sleep(1_000);
    expect(await books.bills(customer)).toHaveLength(2);
    expect(await books.balance(customer)).toBe(balance);
    expect(await books.reserved(customer.accountId)).toBe(0n);
    await books.expectBalanced();
  });
});
