import pino from 'pino';
import { Bill, Books, eventually, SETTLE_TIMEOUT_MS, userMessages } from 'test/e2e/billing-helpers';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';

const REQ_ID = /^req_[0-9a-f]{32}$/;

/** One request followed end to end: the client's id, ours upstream, the provider's on the bill, the log lines. */
describe('one request, end to end', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let customer: Customer;
  let model: string;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    // One failure opens a channel's breaker: the line saying so is written during the request that failed.
    gateway = await TestGateway.start({ BREAKER_FAILURES: '1' }, logger);
    worker = await TestWorker.start();
    books = await Books.open(gateway);
    customer = await gateway.newCustomer();
    model = await gateway.addModel();
  });
  afterAll(async () => {
    await books.close();
    await worker.close();
    await gateway.close();
  });

  async function billOf(requestId: string): Promise<Bill & Record<string, unknown>> {
    const bills = await eventually(
      () => books.bills(customer),
      (found) => found.some((bill) => bill.requestId === requestId),
      SETTLE_TIMEOUT_MS,
    );
    return bills.find((bill) => bill.requestId === requestId) as Bill & Record<string, unknown>;
  }

  async function operatorBillOf(requestId: string): Promise<Record<string, unknown> | undefined> {
    const response = await gateway.admin('GET', `/admin/accounts/${customer.accountId}/bills?limit=200`);
    expect(response.status).toBe(200);
    return (response.body.data as Record<string, unknown>[]).find((bill) => bill.requestId === requestId);
  }

  it("should answer our id and the client's, send ours upstream, and keep the client's and the provider's on the bill", async () => {
    const response = await gateway.chat(
      customer.key,
      { model, messages: userMessages() },
      { 'x-request-id': 'app-7:Trace_42' },
    );

    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    expect(requestId).toMatch(REQ_ID);
    expect(response.headers.get('x-client-request-id')).toBe('app-7:Trace_42');
    const upstream = gateway.mock.requests.filter((received) => received.path.endsWith('/chat/completions')).at(-1);
    expect(upstream?.headers['x-request-id']).toBe(requestId);

    const bill = await billOf(requestId);
    expect(bill.clientRequestId).toBe('app-7:Trace_42');
    // The provider's id is the operator's business: the customer's bill does not carry it.
    expect(bill).not.toHaveProperty('providerRequestId');
    expect(bill).not.toHaveProperty('firstByteMs');
    const operatorBill = await operatorBillOf(requestId);
    expect(operatorBill).toEqual(
      expect.objectContaining({
        requestId,
        clientRequestId: 'app-7:Trace_42',
        providerRequestId: expect.stringMatching(/^mockreq_\d+$/),
        firstByteMs: expect.any(Number),
      }),
    );
  });

  it.each([
    ['too long', 'a'.repeat(129)],
    ['with a space', 'two words'],
    ['with a quote', 'x"y'],
  ])("should ignore a client's X-Request-Id %s, and still answer", async (_, sent) => {
    const response = await gateway.chat(customer.key, { model, messages: userMessages() }, { 'x-request-id': sent });

    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(REQ_ID);
    expect(response.headers.get('x-client-request-id')).toBeNull();
    const bill = await billOf(response.headers.get('x-request-id')!);
    expect(bill.clientRequestId).toBeNull();
  });

  it('should stamp the request id on every line the API logs while the request runs', async () => {
    const failing = `ch-failing-${Date.now()}`;
    const healthy = `ch-healthy-${Date.now()}`;
    await gateway.addChannel(failing, { baseUrl: `${gateway.mock.url}/status/500/v1`, priority: 10 });
    await gateway.addChannel(healthy, { baseUrl: `${gateway.mock.url}/v1`, priority: 0 });
    const failover = await gateway.addModel({
      routes: [
        { channelId: failing, upstreamModel: 'mock-gpt' },
        { channelId: healthy, upstreamModel: 'mock-gpt' },
      ],
    });
    const from = lines.length;

    const response = await gateway.chat(
      customer.key,
      { model: failover, messages: userMessages() },
      { 'x-request-id': 'client-99' },
    );

    expect(response.status).toBe(200);
    const reqId = response.headers.get('x-request-id');
    const written = await eventually(
      () => Promise.resolve(lines.slice(from)),
      (logged) => logged.some((line) => line.msg === 'request'),
      5_000,
    );
    expect(written.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['upstream route failed', 'channel breaker opened', 'request']),
    );
    expect(written.filter((line) => line.reqId !== reqId)).toEqual([]);
    expect(written.find((line) => line.msg === 'upstream route failed')).toEqual(
      expect.objectContaining({ clientReqId: 'client-99', providerRequestId: expect.stringMatching(/^mockreq_/) }),
    );
  });
});
