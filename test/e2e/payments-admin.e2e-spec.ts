import { randomUUID } from 'node:crypto';
import { usd } from 'test/e2e/billing-helpers';
import { expectError, ISO_DATE_TIME } from 'test/e2e/e2e-helpers';
import {
  createTopup,
  DEFAULT_SETTINGS,
  orderNoOf,
  putSettings,
  usePaymentsWorld,
  allPages,
} from 'test/e2e/payments-helpers';

describe('admin payments', () => {
  const world = usePaymentsWorld();
  afterEach(() => putSettings(world));

  const putRaw = (body: unknown) => world.gateway.admin('PUT', '/admin/payments/settings', body);

  describe('settings', () => {
    const withField = (field: string, value: unknown) => ({ ...DEFAULT_SETTINGS, [field]: value });
    const without = (field: keyof typeof DEFAULT_SETTINGS) => {
      const settings: Record<string, unknown> = { ...DEFAULT_SETTINGS };
      delete settings[field];
      return settings;
    };

    it.each([
      ['a zero rate', withField('cnyPerUsd', '0'), 'cnyPerUsd'],
      ['a rate with 7 decimals', withField('cnyPerUsd', '7.1234567'), 'cnyPerUsd'],
      ['a negative rate', withField('cnyPerUsd', '-7.2'), 'cnyPerUsd'],
      ['a rate as a number', withField('cnyPerUsd', 7.2), 'cnyPerUsd'],
      ['a rate with an exponent', withField('cnyPerUsd', '7e0'), 'cnyPerUsd'],
      ['a zero minimum', withField('minTopupUsd', '0'), 'minTopupUsd'],
      ['a negative minimum', withField('minTopupUsd', '-1'), 'minTopupUsd'],
      ['a minimum with 10 decimals', withField('minTopupUsd', '1.0000000001'), 'minTopupUsd'],
      ['a minimum above the maximum', { ...DEFAULT_SETTINGS, minTopupUsd: '100', maxTopupUsd: '10' }, 'maxTopupUsd'],
      ['a maximum that is not a decimal', withField('maxTopupUsd', 'lots'), 'maxTopupUsd'],
      ['a TTL of 0', withField('orderTtlMinutes', 0), 'orderTtlMinutes'],
      ['a TTL of 1441', withField('orderTtlMinutes', 1441), 'orderTtlMinutes'],
      ['a fractional TTL', withField('orderTtlMinutes', 1.5), 'orderTtlMinutes'],
      ['a TTL as a string', withField('orderTtlMinutes', '30'), 'orderTtlMinutes'],
      ['no rate', without('cnyPerUsd'), 'cnyPerUsd'],
      ['no minimum', without('minTopupUsd'), 'minTopupUsd'],
      ['no maximum', without('maxTopupUsd'), 'maxTopupUsd'],
      ['no TTL', without('orderTtlMinutes'), 'orderTtlMinutes'],
      ['an unknown field', withField('usdtPerUsd', '1'), 'usdtPerUsd'],
    ])('should refuse %s with 400 naming the field, and keep the settings', async (_case, body, param) => {
      expectError(await putRaw(body), 400, { code: null, param });

      expect((await world.gateway.admin('GET', '/admin/payments/settings')).body).toEqual(DEFAULT_SETTINGS);
    });

    it('should return what was PUT, the same on GET, with the rate written shortest', async () => {
      const response = await putRaw({
        cnyPerUsd: '7.123450',
        minTopupUsd: '0.5',
        maxTopupUsd: '250.25',
        orderTtlMinutes: 1440,
      });

      const expected = { cnyPerUsd: '7.12345', minTopupUsd: '0.5', maxTopupUsd: '250.25', orderTtlMinutes: 1440 };
      expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: expected });
      expect((await world.gateway.admin('GET', '/admin/payments/settings')).body).toEqual(expected);
    });

    it('should accept a minimum equal to the maximum and a TTL of 1 minute', async () => {
      const response = await putRaw({ cnyPerUsd: '7', minTopupUsd: '5', maxTopupUsd: '5', orderTtlMinutes: 1 });

      expect(response.body).toEqual({ cnyPerUsd: '7', minTopupUsd: '5', maxTopupUsd: '5', orderTtlMinutes: 1 });
    });
  });

  describe('the order list', () => {
    it('should filter by account and status, paging newest first with the account shown', async () => {
      const payer = await world.gateway.newCustomer({ balance: '0' });
      const other = await world.gateway.newCustomer({ balance: '0' });
      const created: any[] = [];
      for (const [index, method] of (['alipay', 'wechatpay', 'alipay', 'wechatpay', 'alipay'] as const).entries()) {
        created.push(await createTopup(world, payer, method, `${20 + index}`));
      }
      const foreign = await createTopup(world, other, 'alipay', '30');
      await world.alipay.pay(orderNoOf(created[0].id));
      await world.wechatpay.pay(orderNoOf(created[3].id));
      const paid = new Set([created[0].id, created[3].id]);

      const all = await allPages(world, `/admin/topups?accountId=${payer.accountId}`, undefined, 2);
      expect(all.map((page) => page.length)).toEqual([2, 2, 1]);
      expect(all.flat().map((topup) => topup.id)).toEqual([...created].reverse().map((topup) => topup.id));
      expect(all.flat().every((topup) => topup.accountId === payer.accountId)).toBe(true);
      expect(all.flat()[4]).toEqual({
        ...created[0],
        accountId: payer.accountId,
        status: 'paid',
        paidAt: expect.stringMatching(ISO_DATE_TIME),
      });

      const pending = await allPages(world, `/admin/topups?accountId=${payer.accountId}&status=pending`, undefined, 2);
      expect(pending.flat().map((topup) => topup.id)).toEqual(
        [...created].reverse().flatMap((topup) => (paid.has(topup.id) ? [] : [topup.id])),
      );
      const paidPages = await allPages(world, `/admin/topups?status=paid&accountId=${payer.accountId}`, undefined, 1);
      expect(paidPages.flat().map((topup) => topup.id)).toEqual([created[3].id, created[0].id]);

      // Without an account, every account's orders of that status.
      const everyPending = (await allPages(world, '/admin/topups?status=pending', undefined, 200)).flat();
      expect(everyPending.every((topup) => topup.status === 'pending')).toBe(true);
      expect(everyPending.map((topup) => topup.id)).toEqual(expect.arrayContaining([foreign.id, created[4].id]));
      expect(everyPending.map((topup) => topup.id)).not.toContain(created[0].id);
    });

    it.each([
      ['status=refunded', 'status'],
      ['accountId=not-a-uuid', 'accountId'],
      ['cursor=garbage', 'cursor'],
      ['limit=0', 'limit'],
      ['email=a@example.com', 'email'],
    ])('should answer 400 naming the parameter for %s', async (query, param) => {
      expectError(await world.gateway.admin('GET', `/admin/topups?${query}`), 400, { code: null, param });
    });
  });

  describe('recheck', () => {
    it('should credit an order paid at the wallet whose notification was lost', async () => {
      const customer = await world.gateway.newCustomer({ balance: '0' });
      const topup = await createTopup(world, customer, 'alipay', '72');
      expect(await world.alipay.pay(orderNoOf(topup.id), { mode: 'drop' })).toEqual([]);
      expect(await world.books.balance(customer)).toBe(0n);

      const response = await world.gateway.admin('POST', `/admin/topups/${topup.id}/recheck`);

      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: { ...topup, accountId: customer.accountId, status: 'paid', paidAt: expect.stringMatching(ISO_DATE_TIME) },
      });
      expect(await world.books.balance(customer)).toBe(usd('10'));
      const again = await world.gateway.admin('POST', `/admin/topups/${topup.id}/recheck`);
      expect(again.body).toEqual(response.body);
      expect(await world.books.balance(customer)).toBe(usd('10'));
    });

    it('should leave an unpaid order pending', async () => {
      const customer = await world.gateway.newCustomer({ balance: '0' });
      const topup = await createTopup(world, customer, 'wechatpay', '72');

      const response = await world.gateway.admin('POST', `/admin/topups/${topup.id}/recheck`);

      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: { ...topup, accountId: customer.accountId },
      });
    });

    it('should answer 404 for an unknown order and 400 for an id that is not a UUID', async () => {
      expectError(await world.gateway.admin('POST', `/admin/topups/${randomUUID()}/recheck`), 404, {
        code: 'not_found',
        param: 'topupId',
      });
      expectError(await world.gateway.admin('POST', '/admin/topups/42/recheck'), 400, {
        code: null,
        param: 'topupId',
      });
    });
  });

  it('should answer 401 on every payments route without the admin token', async () => {
    const customer = await world.gateway.newCustomer({ balance: '0' });
    const topup = await createTopup(world, customer, 'alipay', '10');
    const routes: [string, string, unknown?][] = [
      ['GET', '/admin/payments/settings'],
      ['PUT', '/admin/payments/settings', { ...DEFAULT_SETTINGS, cnyPerUsd: '1' }],
      ['GET', '/admin/topups'],
      ['POST', `/admin/topups/${topup.id}/recheck`],
      ['POST', '/admin/redemption-codes', { amount: '10', count: 1 }],
    ];
    for (const [method, path, body] of routes) {
      for (const token of [undefined, 'wrong-admin-token', customer.token, customer.key]) {
        const response = await world.gateway.call(method, path, { token, body });
        expect({ method, path, token, status: response.status, code: response.body.error?.code }).toEqual({
          method,
          path,
          token,
          status: 401,
          code: 'invalid_admin_token',
        });
      }
    }
    expect((await world.gateway.admin('GET', '/admin/payments/settings')).body).toEqual(DEFAULT_SETTINGS);
    expect((await world.gateway.call('GET', `/console/topups/${topup.id}`, { token: customer.token })).body).toEqual(
      topup,
    );
  });
});
