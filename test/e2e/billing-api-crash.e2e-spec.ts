import { once } from 'node:events';
import { HoldSweeperService } from 'src/modules/billing/hold-sweeper.service';
import {
  BillingWorld,
  Books,
  eventually,
  openBillingWorld,
  requestIdOf,
  sleep,
  userMessages,
} from 'test/e2e/billing-helpers';
import { ApiProcess, killApiProcess, startApiProcess } from 'test/e2e/api-process-helpers';
import { TestGateway, TestWorker } from 'test/support/gateway';

const REPLY = 'one two three four five six seven eight nine ten';
const CHUNK_DELAY_MS = 300;

describe('billing: an API process killed in the middle of a stream', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;
  let api: ApiProcess | null = null;

  beforeAll(async () => {
    world = await openBillingWorld('2.5', '10');
    ({ gateway, worker, books, model } = world);
  });
  afterEach(() => books.expectBalanced());
  afterAll(async () => {
    await killApiProcess(api);
    await world.close();
  });

  it('should charge nothing for the cut-off stream and free its hold by the sweeper, without touching other money', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);
    api = await startApiProcess({});

    const response = await fetch(`${api.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        messages: userMessages('Count slowly'),
        stream: true,
        mock: { reply: REPLY, chunk_delay_ms: CHUNK_DELAY_MS },
      }),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes('two')) {
      const { value, done } = await reader.read();
      if (done) {
        break;
      }
      received += Buffer.from(value).toString('utf8');
    }
    expect(received).toContain('one');

    api.child.kill('SIGKILL');
    await once(api.child, 'exit');
    // The client sees the stream break off, not end.
    const ending = (async () => {
      for (;;) {
        if ((await reader.read()).done) {
          return 'ended cleanly';
        }
      }
    })();
    await expect(ending).rejects.toThrow();

    // Past the rest of the upstream's answer: the process that could have recorded it is gone.
    await sleep(CHUNK_DELAY_MS * 10);
    expect(await books.recordedUsage(customer.accountId, requestId)).toBeNull();
    expect(await books.reserved(customer.accountId)).toBeGreaterThan(0n);
    expect(await books.balance(customer)).toBe(before);

    // The sweeper closes the orphaned hold (here at once; in production past HOLD_SWEEP_AGE_MS).
    expect(await worker.app.get(HoldSweeperService).sweep(0)).toBeGreaterThanOrEqual(1);
    expect(await books.reserved(customer.accountId)).toBe(0n);
    expect(await books.usageRecords([requestId])).toEqual([]);
    expect(await books.balance(customer)).toBe(before);

    // The same money serves the next request, billed once as usual.
    const next = await gateway.chat(customer.key, { model, messages: userMessages() });
    expect(next.status).toBe(200);
    const bills = await books.waitForBills(customer, 1);
    expect(bills.map((bill) => bill.requestId)).toEqual([requestIdOf(next)]);
    expect(
      await eventually(
        () => books.reserved(customer.accountId),
        (reserved) => reserved === 0n,
      ),
    ).toBe(0n);
  }, 60_000);
});
