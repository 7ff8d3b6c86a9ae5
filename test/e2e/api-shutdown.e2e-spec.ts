import { Agent } from 'node:http';
import {
  ApiProcess,
  Answer,
  exchange,
  killApiProcess,
  startApiProcess,
  startStream,
} from 'test/e2e/api-process-helpers';
import { BillingWorld, Books, costOf, openBillingWorld, pricesOf, wireUsageOf } from 'test/e2e/billing-helpers';
import { expectApiError } from 'test/e2e/v1-helpers';
import { Customer, parseEventStream, TestGateway } from 'test/support/gateway';

const INPUT_PRICE = '2.5';
const OUTPUT_PRICE = '10';
const words = (count: number) => Array.from({ length: count }, (_, i) => `word${i}`).join(' ');

/** After SIGTERM a new request is refused: 503 server_overloaded (docs/errors.md), or a closed listener. Never 502. */
function expectRefused(answer: Answer | { error: string }): void {
  if ('error' in answer) {
    expect(answer.error).toBe('ECONNREFUSED');
    return;
  }
  expectApiError({ ...answer, headers: new Headers() }, 503, { type: 'server_error', code: 'server_overloaded' });
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
}

describe('the API process on SIGTERM', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  let model: string;
  let api: ApiProcess | null = null;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE);
    ({ gateway, books, model } = world);
  });
  afterEach(async () => {
    await killApiProcess(api);
    api = null;
    await books.expectBalanced();
  });
  afterAll(() => world.close());

  const streamBody = (reply: string) => ({
    model,
    messages: [{ role: 'user', content: 'Tell me a long story' }],
    stream: true,
    stream_options: { include_usage: true },
    mock: { chunk_delay_ms: 300, reply },
  });

  it('should fail readiness at once, refuse new work without a 502, finish and bill the stream, then exit 0', async () => {
    const customer: Customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);
    api = await startApiProcess({ SHUTDOWN_GRACE_MS: '30000' });
    const url = api.url;
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    const warmUp = await exchange(url, { path: '/health/live', agent: keepAlive });
    expect(warmUp).toMatchObject({ status: 200 });

    const stream = startStream(url, customer.key, streamBody(words(16)));
    await stream.firstBytes;
    let streamDone = false;
    void stream.done.then(() => (streamDone = true));
    const signalledAt = Date.now();
    api.child.kill('SIGTERM');

    let ready = await exchange(url, { path: '/health/ready' });
    while ('status' in ready && ready.status === 200 && Date.now() - signalledAt < 5_000) {
      ready = await exchange(url, { path: '/health/ready' });
    }
    const readinessFailedAfterMs = Date.now() - signalledAt;
    if ('status' in ready) {
      expect(ready).toMatchObject({ status: 503, body: { status: 'unavailable', checks: { process: 'draining' } } });
    }
    const chat = { model, messages: [{ role: 'user', content: 'Hello?' }] };
    const auth = { authorization: `Bearer ${customer.key}` };
    const onNewConnection = await exchange(url, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: auth,
      body: chat,
    });
    const onKeptAlive = await exchange(url, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: auth,
      body: chat,
      agent: keepAlive,
    });
    expect(streamDone).toBe(false);

    expect(readinessFailedAfterMs).toBeLessThan(2_000);
    expectRefused(onNewConnection);
    expectRefused(onKeptAlive);
    const answer = (await stream.done) as Answer;
    expect(answer.status).toBe(200);
    const { chunks, done } = parseEventStream(answer.text);
    expect(done).toBe(true);
    expect(await api.exited).toBe(0);
    keepAlive.destroy();

    const usage = chunks.at(-1).usage;
    expect(usage.completion_tokens).toBe(16);
    const requestId = String(answer.headers['x-request-id']);
    const bills = await books.waitForBills(customer, 1);
    expect(bills.map((bill) => bill.requestId)).toEqual([requestId]);
    const expected = before - costOf(pricesOf(INPUT_PRICE, OUTPUT_PRICE), wireUsageOf(usage));
    expect(await books.waitForBalance(customer, expected)).toBe(expected);
  }, 120_000);

  it('should cut a stream still running when the grace period ends, bill what was delivered, and exit 0', async () => {
    const customer: Customer = await gateway.newCustomer({ balance: '10' });
    const graceMs = 1_500;
    api = await startApiProcess({ SHUTDOWN_GRACE_MS: String(graceMs) });

    const stream = startStream(api.url, customer.key, streamBody(words(60)));
    await stream.firstBytes;
    const signalledAt = Date.now();
    api.child.kill('SIGTERM');

    const answer = await stream.done;
    const cutAfterMs = Date.now() - signalledAt;
    expect(await api.exited).toBe(0);
    const exitedAfterMs = Date.now() - signalledAt;

    if ('text' in answer) {
      expect(parseEventStream(answer.text.slice(0, answer.text.lastIndexOf('\n\n') + 2)).done).toBe(false);
    }
    expect(cutAfterMs).toBeGreaterThanOrEqual(graceMs - 100);
    expect(cutAfterMs).toBeLessThan(graceMs + 3_000);
    expect(exitedAfterMs).toBeLessThan(graceMs + 8_000);
    const bills = await books.waitForBills(customer, 1);
    expect(bills).toHaveLength(1);
    expect(bills[0].completionTokens).toBeGreaterThan(0);
    expect(bills[0].completionTokens).toBeLessThan(60);
  }, 120_000);
});
