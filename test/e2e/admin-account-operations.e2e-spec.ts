import OpenAI from 'openai';
import { CatalogService } from 'src/modules/models/catalog.service';
import { eventually, expectError } from 'test/e2e/e2e-helpers';
import { Books, SETTLE_TIMEOUT_MS, streamUntil, userMessages } from 'test/e2e/billing-helpers';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';

const PROPAGATION_MS = 1_000;

/**
 * The operator's view of one account and its suspension, on two API processes sharing Postgres and
 * Redis (as in production) and a worker that settles.
 */
describe('admin: an account in detail, suspended and unsuspended', () => {
  let a: TestGateway;
  let b: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;

  beforeAll(async () => {
    [a, b] = await Promise.all([TestGateway.start(), TestGateway.start()]);
    worker = await TestWorker.start();
    books = await Books.open(a);
    model = await a.addModel({ inputPrice: '2', outputPrice: '8', maxOutputTokens: 500 });
    // B hears of the model over the bus; reloading here only saves waiting for it.
    await b.app.get(CatalogService).reload();
  });
  afterAll(async () => {
    await books.close();
    await worker.close();
    await Promise.all([a.close(), b.close()]);
  });

  const detailOf = (customer: Customer) => a.admin('GET', `/admin/accounts/${customer.accountId}`);
  const slowStream = (gateway: TestGateway, customer: Customer) =>
    streamUntil(
      gateway,
      customer.key,
      {
        model,
        messages: userMessages(),
        stream: true,
        max_tokens: 50,
        mock: { chunk_delay_ms: 150, reply: 'one two three four five six seven eight' },
      },
      () => false,
    );

  it('should show a live hold while a slow streamed request runs, then its bill, ledger entry and key spend', async () => {
    const customer = await a.newCustomer({ balance: '5' });
    const streaming = slowStream(a, customer);

    const during = await eventually(
      () => detailOf(customer),
      (response) => response.body?.holds?.data?.length === 1,
      3_000,
    );
    expect(during.status).toBe(200);
    const [hold] = during.body.holds.data;
    expect(hold).toEqual({
      requestId: expect.stringMatching(/^req_/),
      keyId: customer.keyId,
      amount: expect.stringMatching(/^0\.\d+$/),
      openedAt: expect.any(String),
    });
    expect(during.body.holds.total).toBe(hold.amount);
    expect(during.body.account).toMatchObject({ id: customer.accountId, balance: '5', suspended: false });
    expect(during.body.keys).toEqual([expect.objectContaining({ id: customer.keyId, status: 'enabled' })]);
    expect(JSON.stringify(during.body.keys)).not.toContain(customer.key);

    const finished = await streaming;
    expect(finished.text).toContain('data: [DONE]');
    expect(finished.requestId).toBe(hold.requestId);
    await books.waitForBills(customer, 1);

    const after = await eventually(
      () => detailOf(customer),
      (response) => response.body.holds.data.length === 0 && response.body.bills.data.length === 1,
      SETTLE_TIMEOUT_MS,
    );
    const [bill] = after.body.bills.data;
    expect(bill).toMatchObject({ requestId: hold.requestId, model, keyId: customer.keyId });
    expect(after.body.holds).toEqual({ total: '0', data: [] });
    expect(after.body.ledger.data.map((entry: { kind: string }) => entry.kind)).toEqual(['usage', 'adjustment']);
    expect(after.body.keys[0].spent).toBe(bill.cost);
    expect(after.body.daily).toEqual([expect.objectContaining({ requests: 1, cost: bill.cost })]);
    expect(after.body.monthly).toEqual([
      expect.objectContaining({ month: after.body.daily[0].date.slice(0, 7), requests: 1, cost: bill.cost }),
    ]);
    expect(after.body.topups).toEqual({ data: [], nextCursor: null });
    const ledgerPage = await a.admin('GET', `/admin/accounts/${customer.accountId}/ledger?limit=1`);
    expect(ledgerPage.body.data).toEqual([after.body.ledger.data[0]]);
    expect(ledgerPage.body.nextCursor).toEqual(expect.any(String));
  });

  it('should answer 404 for an unknown account and its pages', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectError(await a.admin('GET', `/admin/accounts/${unknown}`), 404, { code: 'not_found', param: 'accountId' });
    expectError(await a.admin('GET', `/admin/accounts/${unknown}/bills`), 404, { code: 'not_found' });
    expectError(await a.admin('POST', `/admin/accounts/${unknown}/suspend`, {}), 404, { code: 'not_found' });
  });

  it('should refuse a suspended account on every process at once, keep its console read-only, and let in-flight requests finish billed', async () => {
    const customer = await a.newCustomer({ balance: '5' });
    // B has the key cached, so only the invalidation can make it refuse.
    for (let i = 0; i < 2; i++) {
      expect((await b.call('GET', '/v1/models', { token: customer.key })).status).toBe(200);
    }
    const inFlight = slowStream(b, customer);
    await eventually(
      () => detailOf(customer),
      (response) => response.body.holds.data.length === 1,
      3_000,
    );

    const suspended = await a.admin('POST', `/admin/accounts/${customer.accountId}/suspend`, { reason: 'Chargeback' });
    const since = Date.now();
    expect(suspended.status).toBe(200);
    expect(suspended.body).toMatchObject({ suspended: true, suspensionReason: 'Chargeback' });

    const refused = await eventually(
      () => b.call('GET', '/v1/models', { token: customer.key }),
      (response) => response.status === 403,
      PROPAGATION_MS,
      10,
    );
    expectError(refused, 403, { code: 'account_suspended', param: null });
    expect(Date.now() - since).toBeLessThanOrEqual(PROPAGATION_MS + 100);

    const client = new OpenAI({ apiKey: customer.key, baseURL: `${b.url}/v1`, maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'Say hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, code: 'account_suspended', type: 'invalid_request_error' });

    const anthropic = await b.call('POST', '/v1/messages', {
      headers: { 'x-api-key': customer.key, 'anthropic-version': '2023-06-01' },
      body: { model, max_tokens: 10, messages: userMessages() },
    });
    expect(anthropic.status).toBe(403);
    expect(anthropic.body).toEqual({ type: 'error', error: { type: 'permission_error', message: expect.any(String) } });

    // The request admitted before the suspension ran to its end and is billed.
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(finished.text).toContain('data: [DONE]');
    expect((await books.waitForBills(customer, 1)).map((bill) => bill.requestId)).toEqual([finished.requestId]);

    // The console reads, and refuses every write.
    const token = customer.token;
    expect((await a.call('GET', '/console/account', { token })).status).toBe(200);
    expect((await b.call('GET', '/console/keys', { token })).status).toBe(200);
    expect((await a.call('GET', '/console/bills', { token })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/console/keys', { name: 'another' }],
      ['PATCH', `/console/keys/${customer.keyId}`, { status: 'disabled' }],
      ['DELETE', `/console/keys/${customer.keyId}`, undefined],
      ['POST', '/console/topups', { currency: 'USDT', network: 'TRC20', amount: '10' }],
      ['POST', '/console/redemptions', { code: 'NOPE-NOPE' }],
    ] as const) {
      expectError(await b.call(method, path, { token, body }), 403, { code: 'account_suspended', param: null });
    }
    const detail = await detailOf(customer);
    expect(detail.body.account).toMatchObject({ suspended: true, suspendedAt: expect.any(String) });

    const unsuspended = await a.admin('POST', `/admin/accounts/${customer.accountId}/unsuspend`);
    expect(unsuspended.status).toBe(200);
    expect(unsuspended.body).toMatchObject({ suspended: false, suspendedAt: null, suspensionReason: null });
    const served = await eventually(
      () => b.call('GET', '/v1/models', { token: customer.key }),
      (response) => response.status === 200,
      PROPAGATION_MS,
      10,
    );
    expect(served.status).toBe(200);
    const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi' }] });
    expect(completion.choices[0].message.content).toEqual(expect.any(String));
    expect((await b.call('POST', '/console/keys', { token, body: { name: 'after' } })).status).toBe(201);
  });
});
