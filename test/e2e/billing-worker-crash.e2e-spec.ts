import { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { formatUsd } from 'src/common/money/money';
import { Prices } from 'src/modules/billing/pricing';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import {
  Books,
  costOf,
  eventually,
  pricesOf,
  requestIdOf,
  sleep,
  userMessages,
  wireUsageOf,
} from 'test/e2e/billing-helpers';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';
import { spawnWorker } from 'test/support/worker-process';
import { Client } from 'pg';

const INPUT_PRICE = '3.3';
const OUTPUT_PRICE = '13.7';
// The killed worker's claim on the usage it was settling lapses after this; the replacement
// worker's periodic pass (every 5 s) then claims and settles it.
const CHILD_LEASE_MS = 2_000;
const RECOVERY_TIMEOUT_MS = 20_000;

describe('billing: a worker killed in the middle of a settlement', () => {
  let gateway: TestGateway;
  let books: Books;
  let model: string;
  let prices: Prices;
  let child: ChildProcess | null = null;
  let worker: TestWorker | null = null;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    books = await Books.open(gateway);
    prices = pricesOf(INPUT_PRICE, OUTPUT_PRICE);
    // Requests per minute far above what the load below can send: on a fast machine it sends more than the default 1,000.
    model = await gateway.addModel({ inputPrice: INPUT_PRICE, outputPrice: OUTPUT_PRICE, rpm: 1_000_000 });
  });
  afterEach(() => books.expectBalanced());
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    await worker?.close();
    await books.close();
    await gateway.close();
  });

  async function chatCost(customer: Customer, content: string) {
    const response = await gateway.chat(customer.key, { model, messages: userMessages(content) });
    expect(response.status).toBe(200);
    return { requestId: requestIdOf(response), cost: costOf(prices, wireUsageOf(response.body.usage)) };
  }

  it('should settle every request exactly once after a SIGKILL, charging nothing twice', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);
    child = await spawnWorker({ SETTLEMENT_LEASE_MS: String(CHILD_LEASE_MS) });

    const settledByChild = await chatCost(customer, 'Settled before the crash');
    const afterFirst = before - settledByChild.cost;
    expect(await books.waitForBalance(customer, afterFirst)).toBe(afterFirst);

    // Hold the account row, so the child's next settlement blocks inside its transaction.
    const locker = new Client({ connectionString: process.env.DATABASE_URL });
    await locker.connect();
    let inFlight: { requestId: string; cost: bigint }[];
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [customer.accountId]);
      inFlight = [await chatCost(customer, 'Caught in the crash'), await chatCost(customer, 'Also caught in it')];
      const usage = gateway.app.get(UsageQueueService);
      const claimed = await eventually(
        () => Promise.all(inFlight.map(({ requestId }) => usage.isClaimed(customer.accountId, requestId))),
        (current) => current.every(Boolean),
      );
      expect(claimed).toEqual([true, true]);
      const waiting = await eventually(
        async () =>
          (
            await locker.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          ).rows[0].n,
        (n) => n > 0,
      );
      expect(waiting).toBeGreaterThan(0);

      child.kill('SIGKILL');
      await once(child, 'exit');
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }

    // The killed transaction never committed: nothing of the two requests was charged.
    await sleep(300);
    expect(await books.balance(customer)).toBe(afterFirst);
    expect((await books.bills(customer)).map((bill) => bill.requestId)).toEqual([settledByChild.requestId]);

    worker = await TestWorker.start();

    const expected = afterFirst - inFlight[0].cost - inFlight[1].cost;
    expect(formatUsd(await books.waitForBalance(customer, expected, RECOVERY_TIMEOUT_MS))).toBe(formatUsd(expected));
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    const bills = await books.bills(customer);
    expect(bills.map((bill) => bill.requestId).sort()).toEqual(
      [settledByChild.requestId, ...inFlight.map(({ requestId }) => requestId)].sort(),
    );
    expect(await books.usageRecordsOf(customer.accountId)).toHaveLength(3);
  }, 60_000);

  it('should bill every answered request exactly once when the worker is SIGKILLed under load', async () => {
    const customer = await gateway.newCustomer({ balance: '100' });
    const before = await books.balance(customer);
    // The child is the only worker until it dies.
    await worker?.close();
    worker = null;
    child = await spawnWorker({ SETTLEMENT_LEASE_MS: String(CHILD_LEASE_MS) });
    const answers: { requestId: string; cost: bigint }[] = [];
    let running = true;
    const clients = Array.from({ length: 6 }, async (_, client) => {
      for (let i = 0; running; i++) {
        const response = await gateway.chat(customer.key, { model, messages: userMessages(`client ${client} #${i}`) });
        expect(response.status).toBe(200);
        answers.push({ requestId: requestIdOf(response), cost: costOf(prices, wireUsageOf(response.body.usage)) });
      }
    });
    try {
      // Killed while it settles a steady stream of small batches.
      await eventually(
        () => books.usageRecordsOf(customer.accountId),
        (records) => records.length >= 20,
      );
      child.kill('SIGKILL');
      await once(child, 'exit');
      await sleep(1_000);
    } finally {
      running = false;
      await Promise.all(clients);
    }
    worker = await TestWorker.start();

    const expected = answers.reduce((balance, answer) => balance - answer.cost, before);
    expect(formatUsd(await books.waitForBalance(customer, expected, RECOVERY_TIMEOUT_MS))).toBe(formatUsd(expected));
    const records = await books.usageRecordsOf(customer.accountId);
    expect(records.map((record) => record.request_id).sort()).toEqual(answers.map((answer) => answer.requestId).sort());
    expect((await books.ledgerByReference(answers.map((answer) => answer.requestId))).length).toBe(answers.length);
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
  }, 60_000);
});
