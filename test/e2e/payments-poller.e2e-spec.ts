import { sleep } from 'test/e2e/billing-helpers';
import { eventually } from 'test/e2e/e2e-helpers';
import { expireOrder, orderRow, topupEntries, waitForStatus } from 'test/e2e/payments-db-helpers';
import {
  committedAnswer,
  newWalletOrder,
  orderNoOf,
  pollScheduled,
  recheck,
  TOPUP_CNY,
  TOPUP_CREDIT,
  usePaymentsWorld,
  Wallet,
  WALLETS,
} from 'test/e2e/payments-helpers';
import { WalletFault } from 'tools/fake-wallets/fake-wallet';

// The first poll 300 ms after an order is created, then one every second.
const FIRST_POLL_MS = 300;
const POLL_EVERY_MS = 1_000;
// A `slow` wallet answers past the gateway's 10 s timeout for each call.
const PROVIDER_TIMEOUT_MS = 10_000;

describe('payments: the poller asks the wallets about pending orders', () => {
  const world = usePaymentsWorld({ pollDelaysMs: `${FIRST_POLL_MS},${POLL_EVERY_MS}` });

  const newOrder = (method: Wallet) => newWalletOrder(world, method);

  it.each(WALLETS)('should credit a %s payment whose notification was lost, from its own query', async (method) => {
    const { customer, orderId, orderNo } = await newOrder(method);
    expect(await world.wallet(method).pay(orderNo, { mode: 'drop' })).toEqual([]);

    expect(await waitForStatus(world, orderId, 'paid')).toMatchObject({
      confirmed_via: 'poller',
      provider_trade_no: world.wallet(method).order(orderNo)!.tradeNo,
    });
    expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
    expect(await topupEntries(world, orderId)).toHaveLength(1);
  });

  it.each(WALLETS)(
    'should credit a %s payment once when 20 copies of its notification race the poller and a recheck',
    async (method) => {
      const { customer, orderId, orderNo } = await newOrder(method);
      // Paid at once, notified just before the first poll: the copies, the poll and the recheck cross.
      const [answers, rechecked] = await Promise.all([
        world.wallet(method).pay(orderNo, { copies: 20, delayMs: FIRST_POLL_MS - 20 }),
        new Promise((resolve) => setTimeout(resolve, FIRST_POLL_MS - 20)).then(() => recheck(world, orderId)),
      ]);

      expect(answers).toEqual(Array.from({ length: 20 }, () => committedAnswer(method)));
      expect(rechecked.body).toMatchObject({ status: 'paid' });
      expect(await topupEntries(world, orderId)).toEqual([
        { account_id: customer.accountId, amount: TOPUP_CREDIT.toString() },
      ]);
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
      const ledger = await world.books.ledger(customer);
      expect(ledger.map((entry) => [entry.kind, entry.reference])).toEqual([['topup', orderId]]);
    },
  );

  const faults: WalletFault[] = ['down', 'garbage', 'error', 'bad_signature'];
  const faultCases = WALLETS.flatMap((method) => faults.map((fault) => ({ method, fault })));

  it.each(faultCases)(
    'should keep a paid $method order pending while the query meets $fault, and credit it at the next poll',
    async ({ method, fault }) => {
      const { customer, orderId, orderNo } = await newOrder(method);
      world.wallet(method).failNext('query', fault);
      await world.wallet(method).pay(orderNo, { mode: 'drop' });

      // The failed poll ended by scheduling the next one, and credited nothing.
      expect(await eventually(() => pollScheduled(world, orderId, 1), Boolean, 5_000)).toBe(true);
      expect(await orderRow(world, orderId)).toMatchObject({ status: 'pending' });
      expect(await topupEntries(world, orderId)).toEqual([]);

      expect(await waitForStatus(world, orderId, 'paid', 5_000)).toMatchObject({ confirmed_via: 'poller' });
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
    },
  );

  it('should keep paid orders pending while each wallet answers too slowly, and credit them at the next poll', async () => {
    // Both wallets at once: each slow query holds its poll for the gateway's whole timeout.
    const orders = await Promise.all(WALLETS.map((method) => newOrder(method)));
    const queriesBefore = WALLETS.map((method) => world.wallet(method).calls.query);
    for (const [index, method] of WALLETS.entries()) {
      world.wallet(method).failNext('query', 'slow');
      await world.wallet(method).pay(orders[index].orderNo, { mode: 'drop' });
    }
    const asked = () => WALLETS.map((method, index) => world.wallet(method).calls.query - queriesBefore[index]);
    expect(
      await eventually(
        () => Promise.resolve(asked()),
        (counts) => counts.every((n) => n >= 1),
        5_000,
      ),
    ).toEqual([1, 1]);

    // Well into the wait for an answer that comes too late: nothing is credited meanwhile.
    await sleep(PROVIDER_TIMEOUT_MS / 2);
    for (const { orderId } of orders) {
      expect(await orderRow(world, orderId)).toMatchObject({ status: 'pending' });
      expect(await topupEntries(world, orderId)).toEqual([]);
    }

    for (const { customer, orderId } of orders) {
      expect(await waitForStatus(world, orderId, 'paid', PROVIDER_TIMEOUT_MS)).toMatchObject({
        confirmed_via: 'poller',
      });
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
    }
    // Each credit came from a later query, not from the answer that arrived too late.
    expect(asked().every((n) => n >= 2)).toBe(true);
  }, 30_000);

  it.each(WALLETS)('should close an unpaid %s order at its expiry, at the poll, and expire it', async (method) => {
    const { customer, orderId, orderNo } = await newOrder(method);
    await expireOrder(world, orderId);

    expect(await waitForStatus(world, orderId, 'expired', 5_000)).toMatchObject({ closed: true });
    expect(world.wallet(method).order(orderNo)!.state).toBe('CLOSED');
    expect(await topupEntries(world, orderId)).toEqual([]);
    expect(await world.books.balance(customer)).toBe(0n);
  });

  it.each(WALLETS)('should expire at once an order %s never created, and find nothing to credit', async (method) => {
    const customer = await world.gateway.newCustomer({ balance: '0' });
    world.wallet(method).failNext('create', 'down');
    const created = await world.gateway.call('POST', '/console/topups', {
      token: customer.token,
      body: { currency: 'CNY', method, amount: TOPUP_CNY },
    });
    expect(created.status).toBe(502);
    // The payer never saw a code: the order is expired, and counts against no limit of waiting orders.
    const listed = await world.gateway.call('GET', '/console/topups', { token: customer.token });
    expect(listed.body.data).toEqual([expect.objectContaining({ status: 'expired' })]);
    const orderId: string = listed.body.data[0].id;
    expect(world.wallet(method).order(orderNoOf(orderId))).toBeUndefined();

    // Asked again, the wallet knows no such payment: still expired, nothing credited.
    expect((await recheck(world, orderId)).body).toMatchObject({ status: 'expired' });
    expect(await topupEntries(world, orderId)).toEqual([]);
  });
});
