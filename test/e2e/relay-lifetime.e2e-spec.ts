import { request as httpRequest } from 'node:http';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { Books, eventually, sleep } from 'test/e2e/billing-helpers';
import { expectApiError, userMessage } from 'test/e2e/v1-helpers';
import { Customer, parseEventStream, TestGateway, TestWorker } from 'test/support/gateway';

/** Sends a completion and hangs up (destroys the socket) after `ms`, whatever arrived by then. */
function hangUpAfter(gateway: TestGateway, key: string, body: Record<string, unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const request = httpRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    request.on('response', (response) => response.resume());
    request.on('error', () => undefined);
    request.on('close', () => resolve());
    request.end(JSON.stringify(body));
    setTimeout(() => request.destroy(), ms);
  });
}

/**
 * A streaming client that never reads its answer (a paused socket also never notices being cut).
 * Resolves once the answer's headers arrived, with a function that hangs up.
 */
function neverRead(gateway: TestGateway, key: string, body: Record<string, unknown>): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    request.on('response', (response) => {
      response.pause();
      resolve(() => request.destroy());
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

describe('relay lifetime: hang-ups, slow readers and the deadline free everything', () => {
  describe('one slot, a long queue (MAX_CONCURRENT_COMPLETIONS 1, QUEUE_WAIT_MS 20000)', () => {
    let gateway: TestGateway;
    let customer: Customer;
    let model: string;

    beforeAll(async () => {
      gateway = await TestGateway.start({
        MAX_CONCURRENT_COMPLETIONS: '1',
        MAX_QUEUED_COMPLETIONS: '50',
        QUEUE_WAIT_MS: '20000',
        CLIENT_DRAIN_TIMEOUT_MS: '1000',
      });
      // No worker settles here, so each answer's hold (up to 200k tokens) stays: room for many.
      customer = await gateway.newCustomer({ balance: '1000' });
      model = await gateway.addModel({ maxOutputTokens: 200_000 });
      expect((await gateway.chat(customer.key, { model, messages: userMessage() })).status).toBe(200);
    });
    afterAll(() => gateway?.close());

    it('should drop twenty queued clients that hung up and serve the next request at once', async () => {
      const upstreamBefore = gateway.mock.requests.length;
      const words = Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ');
      const slow = gateway.chat(customer.key, {
        model,
        messages: userMessage(),
        stream: true,
        mock: { reply: words, chunk_delay_ms: 100 },
      });
      await eventually(
        () => Promise.resolve(gateway.mock.requests.length),
        (count) => count > upstreamBefore,
      );
      const leaving = await gateway.newCustomer();
      const queued = { model, messages: userMessage(), stream: true };
      await Promise.all(Array.from({ length: 20 }, () => hangUpAfter(gateway, leaving.key, queued, 300)));

      expect(parseEventStream((await slow).text).done).toBe(true);
      const startedAt = performance.now();
      const next = await gateway.chat(customer.key, { model, messages: userMessage() });

      expect(next.status).toBe(200);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      // The clients that left never reached the upstream, and none of their holds stayed.
      expect(gateway.mock.requests.length).toBe(upstreamBefore + 2);
      const gate = gateway.app.get(BalanceGateService);
      expect(
        await eventually(
          () => gate.reserved(leaving.accountId),
          (held) => held === 0n,
        ),
      ).toBe(0n);
    });

    it('should cut a streaming client that stops reading after CLIENT_DRAIN_TIMEOUT_MS and free its slot', async () => {
      // About 20 MB of events: far more than the socket buffers between the gateway and the client.
      const body = { model, messages: userMessage(), stream: true, max_tokens: 200_000, mock: { repeat: 20_000 } };
      const hangUp = await neverRead(gateway, customer.key, body);
      try {
        // The only slot is the stuck stream's until the gateway gives up on it (1 s without reading).
        const startedAt = performance.now();
        const next = await gateway.chat(customer.key, { model, messages: userMessage() });

        expect(next.status).toBe(200);
        expect(performance.now() - startedAt).toBeLessThan(6_000);
      } finally {
        hangUp();
      }
    });
  });

  describe('a deadline and a per-account cap (MAX_REQUEST_MS 2000, MAX_CONCURRENT_PER_ACCOUNT 2)', () => {
    let gateway: TestGateway;
    let worker: TestWorker;
    let books: Books;
    let model: string;

    beforeAll(async () => {
      gateway = await TestGateway.start({ MAX_REQUEST_MS: '2000', MAX_CONCURRENT_PER_ACCOUNT: '2' });
      worker = await TestWorker.start();
      books = await Books.open(gateway);
      model = await gateway.addModel();
    });
    afterAll(async () => {
      await books?.close();
      await worker?.close();
      await gateway?.close();
    });

    it('should end a stream at the deadline with an error event, cut the upstream and bill what was delivered', async () => {
      const customer = await gateway.newCustomer();
      const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
      const startedAt = performance.now();

      const response = await gateway.chat(customer.key, {
        model,
        messages: userMessage(),
        stream: true,
        mock: { reply: words, chunk_delay_ms: 200 },
      });

      const elapsed = performance.now() - startedAt;
      expect(elapsed).toBeGreaterThan(1_900);
      expect(elapsed).toBeLessThan(4_000);
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(false);
      expect(chunks.at(-1)).toEqual({
        error: { message: expect.any(String), type: 'server_error', param: null, code: 'request_timeout' },
      });
      const delivered = chunks.filter((chunk) => typeof chunk.choices?.[0]?.delta?.content === 'string').length;
      expect(delivered).toBeGreaterThan(3);
      const bills = await books.waitForBills(customer, 1);
      expect(bills).toHaveLength(1);
      expect(bills[0].completionTokens).toBeGreaterThan(0);
      expect(bills[0].completionTokens).toBeLessThan(40);
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    });

    it('should answer a non-streaming request that passes the deadline with a 500 and bill nothing', async () => {
      const customer = await gateway.newCustomer();
      const before = await books.balance(customer);

      const response = await gateway.chat(customer.key, { model, messages: userMessage(), mock: { latency_ms: 5000 } });

      expectApiError(response, 500, { type: 'server_error', code: null, param: null });
      expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
      await sleep(500);
      expect(await books.bills(customer)).toEqual([]);
      expect(await books.balance(customer)).toBe(before);
    });

    it('should refuse an account its third concurrent completion with 503 while another account is served', async () => {
      const busy = await gateway.newCustomer();
      const other = await gateway.newCustomer();
      const slow = { model, messages: userMessage(), mock: { latency_ms: 1000 } };

      const first = [gateway.chat(busy.key, slow), gateway.chat(busy.key, slow)];
      await sleep(200);
      const third = await gateway.chat(busy.key, slow);
      const elsewhere = await gateway.chat(other.key, { model, messages: userMessage() });

      expectApiError(third, 503, { type: 'server_error', code: 'server_overloaded', param: null });
      expect(third.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(elsewhere.status).toBe(200);
      expect((await Promise.all(first)).map((response) => response.status)).toEqual([200, 200]);
      expect((await gateway.chat(busy.key, { model, messages: userMessage() })).status).toBe(200);
    });
  });
});
