import { SMALL_BODY_LIMIT_BYTES } from 'src/common/http/body-limits';
import { expectApiError } from 'test/e2e/billing-helpers';
import { expireOrder, orderRow, topupEntries } from 'test/e2e/payments-db-helpers';
import {
  committedAnswer,
  newWalletOrder,
  recheck,
  refusedAnswer,
  rejectedNotifications,
  TOPUP_CREDIT,
  usePaymentsWorld,
  Wallet,
  WALLETS,
} from 'test/e2e/payments-helpers';
import { NotifyOptions } from 'tools/fake-wallets/fake-wallet';

/** Notifications and rechecks with the poller out of the way: its first poll is minutes after the suite. */
describe('payments: what a wallet notification credits', () => {
  const world = usePaymentsWorld();

  const newOrder = (method: Wallet) => newWalletOrder(world, method);

  const refusals: [string, NotifyOptions, string][] = [
    ['forged', { mode: 'forge' }, 'bad_signature'],
    ['altered after signing', { mode: 'alter' }, 'bad_signature'],
    ['claiming another amount', { amount: '1.00' }, 'wrong_amount'],
    ['naming another app or merchant', { appId: 'other' }, 'wrong_app'],
  ];
  const refusalCases = WALLETS.flatMap((method) =>
    refusals.map(([what, options, reason]) => ({ method, what, options, reason })),
  );

  it.each(refusalCases)(
    'should refuse a $method notification $what, credit nothing and count it as $reason',
    async ({ method, options, reason }) => {
      const { customer, orderId, orderNo } = await newOrder(method);
      const rejectedBefore = await rejectedNotifications(world, method, reason);

      expect(await world.wallet(method).pay(orderNo, options)).toEqual([refusedAnswer(method)]);

      expect(await rejectedNotifications(world, method, reason)).toBe(rejectedBefore + 1);
      expect(await orderRow(world, orderId)).toMatchObject({ status: 'pending', provider_trade_no: null });
      expect(await topupEntries(world, orderId)).toEqual([]);
      expect(await world.books.balance(customer)).toBe(0n);

      // The refused notification left the order as it was: the genuine one still credits it.
      expect(await world.wallet(method).notifyAgain(orderNo)).toEqual([committedAnswer(method)]);
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
    },
  );

  it.each(WALLETS)('should acknowledge a %s notification sent again later without a second credit', async (method) => {
    const { customer, orderId, orderNo } = await newOrder(method);
    expect(await world.wallet(method).pay(orderNo)).toEqual([committedAnswer(method)]);
    expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);

    expect(await world.wallet(method).notifyAgain(orderNo)).toEqual([committedAnswer(method)]);

    expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
    expect(await topupEntries(world, orderId)).toEqual([
      { account_id: customer.accountId, amount: TOPUP_CREDIT.toString() },
    ]);
    expect(await orderRow(world, orderId)).toMatchObject({ status: 'paid', confirmed_via: 'webhook' });
  });

  it.each(WALLETS)(
    'should credit a %s payment whose notification was lost as soon as an operator rechecks',
    async (method) => {
      const { customer, orderId, orderNo } = await newOrder(method);
      expect(await world.wallet(method).pay(orderNo, { mode: 'drop' })).toEqual([]);
      expect(await orderRow(world, orderId)).toMatchObject({ status: 'pending' });

      const rechecked = await recheck(world, orderId);

      expect(rechecked.status).toBe(200);
      expect(rechecked.body).toMatchObject({ id: orderId, status: 'paid', paidAt: expect.any(String) });
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
      expect(await orderRow(world, orderId)).toMatchObject({
        confirmed_via: 'recheck',
        provider_trade_no: world.wallet(method).order(orderNo)!.tradeNo,
      });
      // The wallet's notification, delivered at last, finds the credit already made.
      expect(await world.wallet(method).notifyAgain(orderNo)).toEqual([committedAnswer(method)]);
      expect(await topupEntries(world, orderId)).toHaveLength(1);
    },
  );

  it.each(WALLETS)(
    'should close an expired, unpaid %s order at the wallet and expire it without credit',
    async (method) => {
      const { customer, orderId, orderNo } = await newOrder(method);
      await expireOrder(world, orderId);

      const rechecked = await recheck(world, orderId);

      expect(rechecked.status).toBe(200);
      expect(rechecked.body).toMatchObject({ id: orderId, status: 'expired' });
      expect(world.wallet(method).order(orderNo)!.state).toBe('CLOSED');
      expect(await orderRow(world, orderId)).toMatchObject({ status: 'expired', closed: true });
      const read = await world.gateway.call('GET', `/console/topups/${orderId}`, { token: customer.token });
      expect(read.body).toMatchObject({ status: 'expired' });
      expect(await topupEntries(world, orderId)).toEqual([]);
      expect(await world.books.balance(customer)).toBe(0n);
    },
  );

  it.each(WALLETS)(
    'should credit a %s payment made after the order expired here, keeping its trade number',
    async (method) => {
      const { customer, orderId, orderNo } = await newOrder(method);
      // Expired in our database while the wallet still takes the payment (the close never reached it).
      await expireOrder(world, orderId, 'expired');

      expect(await world.wallet(method).pay(orderNo)).toEqual([committedAnswer(method)]);

      const tradeNo = world.wallet(method).order(orderNo)!.tradeNo;
      expect(tradeNo).toEqual(expect.any(String));
      expect(await orderRow(world, orderId)).toMatchObject({ status: 'paid', provider_trade_no: tradeNo });
      const read = await world.gateway.call('GET', `/console/topups/${orderId}`, { token: customer.token });
      expect(read.body).toMatchObject({ status: 'paid', paidAt: expect.any(String) });
      expect(await world.books.balance(customer)).toBe(TOPUP_CREDIT);
      expect(await topupEntries(world, orderId)).toHaveLength(1);
    },
  );

  it.each(WALLETS)('should answer 413 to a %s notification larger than any real one', async (method) => {
    const contentType = method === 'alipay' ? 'application/x-www-form-urlencoded' : 'application/json';
    const response = await world.gateway.call('POST', `/webhooks/${method}`, {
      headers: { 'content-type': contentType },
      body: `{"padding":"${'x'.repeat(SMALL_BODY_LIMIT_BYTES)}"}`,
    });

    expectApiError(response, 413, { code: 'payload_too_large' });
  });

  it('should answer 404, not 400, to a form posted to a webhook path no route serves', async () => {
    const response = await world.gateway.call('POST', '/webhooks/alipay/extra', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'out_trade_no=1&trade_status=TRADE_SUCCESS',
    });

    expect(response.status).toBe(404);
  });
});
