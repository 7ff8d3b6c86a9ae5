import { eventually } from 'test/e2e/e2e-helpers';
import { blockedOrderUpdates, lockOrderRow, orderRow, topupEntries, waitForStatus } from 'test/e2e/payments-db-helpers';
import {
  committedAnswer,
  newWalletOrder,
  retryAnswer,
  TOPUP_CREDIT,
  usePaymentsWorld,
  Wallet,
  WALLETS,
} from 'test/e2e/payments-helpers';
import { stopWorker } from 'test/support/worker-process';

// A killed worker's job is taken again once its 10 s lock lapsed, at the next stalled check (every 5 s).
const STALLED_RECOVERY_MS = 20_000;

describe('payments: a confirmation that cannot commit', () => {
  const world = usePaymentsWorld();

  const newOrder = (method: Wallet) => newWalletOrder(world, method);

  it.each(WALLETS)(
    'should tell %s to resend while the credit cannot commit, and acknowledge the resend once it did',
    async (method) => {
      const { customer, orderId, orderNo } = await newOrder(method);
      const lock = await lockOrderRow(orderId);
      try {
        expect(await world.wallet(method).pay(orderNo)).toEqual([retryAnswer(method)]);
        expect(await blockedOrderUpdates(world)).toBe(1);
        expect(await orderRow(world, orderId)).toMatchObject({ status: 'pending' });
        expect(await topupEntries(world, orderId)).toEqual([]);
      } finally {
        await lock.release();
      }

      expect(await world.wallet(method).notifyAgain(orderNo)).toEqual([committedAnswer(method)]);
      expect(await topupEntries(world, orderId)).toHaveLength(1);
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
    },
    30_000,
  );

  it('should credit once what a worker killed in the middle of confirming left, when another worker starts', async () => {
    const orders = await Promise.all(WALLETS.map((method) => newOrder(method)));
    const locks = await Promise.all(orders.map(({ orderId }) => lockOrderRow(orderId)));
    let answers: Promise<unknown[]>;
    try {
      answers = Promise.all(WALLETS.map((method, index) => world.wallet(method).pay(orders[index].orderNo)));
      // Both confirmations are inside their transactions, waiting for the rows.
      expect(
        await eventually(
          () => blockedOrderUpdates(world),
          (n) => n === 2,
          10_000,
        ),
      ).toBe(2);
      await stopWorker(world.worker);
    } finally {
      await Promise.all(locks.map((lock) => lock.release()));
    }

    // The killed worker's transactions died with it.
    expect(await answers).toEqual(WALLETS.map((method) => [retryAnswer(method)]));
    for (const { orderId } of orders) {
      expect(await orderRow(world, orderId)).toMatchObject({ status: 'pending' });
      expect(await topupEntries(world, orderId)).toEqual([]);
    }

    await world.restartWorker();

    for (const [index, { customer, orderId }] of orders.entries()) {
      expect(await waitForStatus(world, orderId, 'paid', STALLED_RECOVERY_MS)).toMatchObject({
        confirmed_via: 'webhook',
        provider_trade_no: world.wallet(WALLETS[index]).order(orders[index].orderNo)!.tradeNo,
      });
      expect(await topupEntries(world, orderId)).toHaveLength(1);
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
      expect(await world.wallet(WALLETS[index]).notifyAgain(orders[index].orderNo)).toEqual([
        committedAnswer(WALLETS[index]),
      ]);
    }
  }, 60_000);
});
