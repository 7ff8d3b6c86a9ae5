import { sleep } from 'test/e2e/billing-helpers';
import { eventually } from 'test/e2e/e2e-helpers';
import { expireOrder, orderRow, topupEntries, waitForStatus } from 'test/e2e/payments-db-helpers';
import {
  committedAnswer,
  newWalletOrder,
  orderNoOf,
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
// Room for a loaded machine: the polls are due within ~1.3 s of an order's creation.
const CREDIT_WAIT_MS = 10_000;
// An expired order's late checks back off to half its age at the last one: paid a minute after expiry,
// it is found within 30 s (at once when no check came between its poll and the payment).
const LATE_CREDIT_WAIT_MS = 40_000;

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
      world.wallet(method).failNext('query', fault, 1, orderNo);
      await world.wallet(method).pay(orderNo, { mode: 'drop' });

      expect(await waitForStatus(world, orderId, 'paid', CREDIT_WAIT_MS)).toMatchObject({ confirmed_via: 'poller' });
      // The faulty answer credited nothing (a credit ends the polls): the one query after it found the payment.
      const queries = world.wallet(method).order(orderNo)!.queries;
      expect(queries.slice(queries.indexOf(fault))).toEqual([fault, 'PAID']);
      expect(await topupEntries(world, orderId)).toHaveLength(1);
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
    },
  );

  it('should keep paid orders pending while each wallet answers too slowly, and credit them at the next poll', async () => {
    // Both wallets at once: each slow query holds its poll for the gateway's whole timeout.
    const orders = await Promise.all(WALLETS.map((method) => newOrder(method)));
    for (const [index, method] of WALLETS.entries()) {
      world.wallet(method).failNext('query', 'slow', 1, orders[index].orderNo);
      await world.wallet(method).pay(orders[index].orderNo, { mode: 'drop' });
    }
    const queriesOf = (index: number) => world.wallet(WALLETS[index]).order(orders[index].orderNo)!.queries;
    // Well into each wait for an answer that comes too late: nothing is credited meanwhile.
    await Promise.all(
      orders.map(async ({ orderId }, index) => {
        const slowQuerySent = () => Promise.resolve(queriesOf(index).includes('slow'));
        expect(await eventually(slowQuerySent, Boolean, CREDIT_WAIT_MS)).toBe(true);
        await sleep(PROVIDER_TIMEOUT_MS / 2);
        expect(await orderRow(world, orderId)).toMatchObject({ status: 'pending' });
        expect(await topupEntries(world, orderId)).toEqual([]);
      }),
    );

    for (const { customer, orderId } of orders) {
      expect(await waitForStatus(world, orderId, 'paid', PROVIDER_TIMEOUT_MS)).toMatchObject({
        confirmed_via: 'poller',
      });
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
    }
    // Each credit came from the query after the slow one, not from the answer that arrived too late.
    for (const index of WALLETS.keys()) {
      const queries = queriesOf(index);
      expect(queries.slice(queries.indexOf('slow'))).toEqual(['slow', 'PAID']);
    }
  }, 45_000);

  it.each(WALLETS)('should close an unpaid %s order at its expiry, at the poll, and expire it', async (method) => {
    const { customer, orderId, orderNo } = await newOrder(method);
    await expireOrder(world, orderId);

    expect(await waitForStatus(world, orderId, 'expired', 5_000)).toMatchObject({ closed: true });
    expect(world.wallet(method).order(orderNo)!.state).toBe('CLOSED');
    expect(await topupEntries(world, orderId)).toEqual([]);
    expect(await world.books.balance(customer)).toBe(0n);
  });

  it.each(WALLETS)(
    'should credit once, by a query of the sweep, a %s payment made a minute after expiry whose notification was lost',
    async (method) => {
      const { customer, orderId, orderNo } = await newOrder(method);
      // Expired here a minute ago while the wallet still takes the payment (its close never reached it).
      await expireOrder(world, orderId, 'expired', 60);
      // The order's first poll asks once more and ends its chain: only the sweep asks after the payment.
      // The sweep's first late check may come before the payment too (it runs on its own clock): every
      // answer before the payment is WAIT, whichever asked.
      const queried = () => Promise.resolve(world.wallet(method).order(orderNo)!.queries.length);
      expect(await eventually(queried, (count) => count > 0, CREDIT_WAIT_MS)).toBeGreaterThan(0);
      expect(new Set(world.wallet(method).order(orderNo)!.queries)).toEqual(new Set(['WAIT']));
      expect(await world.wallet(method).pay(orderNo, { mode: 'drop' })).toEqual([]);

      expect(await waitForStatus(world, orderId, 'paid', LATE_CREDIT_WAIT_MS)).toMatchObject({
        confirmed_via: 'poller',
        provider_trade_no: world.wallet(method).order(orderNo)!.tradeNo,
      });
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
      expect(await topupEntries(world, orderId)).toHaveLength(1);
      // Paid, the order is asked about no more: one query found the payment.
      expect(
        world
          .wallet(method)
          .order(orderNo)!
          .queries.filter((query) => query === 'PAID'),
      ).toEqual(['PAID']);
    },
    LATE_CREDIT_WAIT_MS + 10_000,
  );

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
