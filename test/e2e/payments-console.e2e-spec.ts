import { randomUUID } from 'node:crypto';
import { usd } from 'test/e2e/billing-helpers';
import { expectError, ISO_DATE_TIME, UUID } from 'test/e2e/e2e-helpers';
import {
  createTopup,
  DEFAULT_SETTINGS,
  orderNoOf,
  putSettings,
  usePaymentsWorld,
  allPages,
} from 'test/e2e/payments-helpers';
import { freePort } from 'test/support/free-port';
import { Customer, TestGateway } from 'test/support/gateway';
import { startFakeAlipay } from 'tools/fake-wallets/fake-alipay';
import { FakeWallet } from 'tools/fake-wallets/fake-wallet';

const MINUTE_MS = 60_000;

describe('console top-ups', () => {
  const world = usePaymentsWorld();
  let customer: Customer;

  beforeAll(async () => {
    customer = await world.gateway.newCustomer({ balance: '0' });
  });
  // Tests that change the operator's settings leave them as every payments suite expects.
  afterEach(() => putSettings(world));

  const post = (body: unknown, token = customer.token) =>
    world.gateway.call('POST', '/console/topups', { token, body });
  const get = (path: string, token = customer.token) => world.gateway.call('GET', path, { token });

  describe('bad input', () => {
    const cny = (amount: unknown) => ({ currency: 'CNY', method: 'alipay', amount });

    it.each([
      ['an exponent', cny('1e3'), 'amount'],
      ['three decimals', cny('1.234'), 'amount'],
      ['zero', cny('0'), 'amount'],
      ['zero with decimals', cny('0.00'), 'amount'],
      ['a negative amount', cny('-5'), 'amount'],
      ['a number instead of a string', cny(100), 'amount'],
      ['an empty amount', cny(''), 'amount'],
      ['spaces around the amount', cny(' 100 '), 'amount'],
      ['no amount', { currency: 'CNY', method: 'alipay' }, 'amount'],
      ['no currency', { method: 'alipay', amount: '100' }, 'currency'],
      ['an unknown currency', { currency: 'EUR', method: 'alipay', amount: '100' }, 'currency'],
      ['a lower-case currency', { currency: 'cny', method: 'alipay', amount: '100' }, 'currency'],
      ['no method', { currency: 'CNY', amount: '100' }, 'method'],
      ['an unknown method', { currency: 'CNY', method: 'paypal', amount: '100' }, 'method'],
      ['redemption as a method', { currency: 'CNY', method: 'redemption', amount: '100' }, 'method'],
      ['USDT with a network', { currency: 'USDT', network: 'TRC20', amount: '100' }, 'network'],
      ['USDT without a network', { currency: 'USDT', amount: '100' }, 'network'],
      ['an unknown network', { currency: 'USDT', network: 'BEP20', amount: '100' }, 'network'],
      ['a network on a CNY order', { ...cny('100'), network: 'TRC20' }, 'network'],
      ['an unknown field', { ...cny('100'), coupon: 'FREE' }, 'coupon'],
    ])('should answer 400 naming the parameter for %s', async (_case, body, param) => {
      const response = await post(body);

      expectError(response, 400, { code: null, param });
    });

    it('should answer 400 for a body that is not an object', async () => {
      expectError(await post('"100"'), 400, { code: null });
    });

    // Only /webhooks takes a form (Alipay notifies with one); everywhere else it is an unsupported body.
    it.each(['/console/topups', '/console/redemptions'])('should answer 400 to a form posted to %s', async (path) => {
      const response = await world.gateway.call('POST', path, {
        token: customer.token,
        body: 'currency=CNY&method=alipay&amount=100',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });

      expectError(response, 400, { code: null, param: null });
    });

    it.each([
      // 1 USD at 7.2 is 7.20 CNY; 7.19 buys 0.998… USD.
      ['7.19', 'below the minimum'],
      // 10,000 USD at 7.2 is 72,000 CNY.
      ['72000.01', 'above the maximum'],
    ])('should refuse %s CNY (%s in USD at the rate), naming amount and the allowed range', async (amount) => {
      const response = await post(cny(amount));

      expectError(response, 400, { code: null, param: 'amount' });
      expect(response.body.error.message).toContain('7.20');
      expect(response.body.error.message).toContain('72000.00');
      expect(await world.books.balance(customer)).toBe(0n);
    });

    it.each([
      ['7.20', '1'],
      ['72000.00', '10000'],
    ])('should accept %s CNY, exactly the bound of %s USD', async (amount, credit) => {
      const topup = await createTopup(world, customer, 'alipay', amount);

      expect({ amount: topup.amount, credit: topup.credit }).toEqual({ amount, credit });
    });

    it('should apply the bounds at the rate in force when the order is created', async () => {
      await putSettings(world, { cnyPerUsd: '8' });

      // 7.20 CNY buys only 0.9 USD at 8 CNY per USD.
      const response = await post(cny('7.20'));

      expectError(response, 400, { code: null, param: 'amount' });
      expect(response.body.error.message).toContain('8.00');
    });

    it('should refuse CNY while no exchange rate is configured, naming currency', async () => {
      await world.db.query('DELETE FROM payment_settings');
      const settings = await world.gateway.admin('GET', '/admin/payments/settings');
      expect(settings.body.cnyPerUsd).toBeNull();
      const before = { ...world.alipay.calls };

      const response = await post(cny('100'));

      // The customer chose a currency this gateway cannot take yet: the method and amount are fine.
      expectError(response, 400, { code: null, param: 'currency' });
      expect(response.body.error.message).toMatch(/CNY/);
      expect(world.alipay.calls).toEqual(before);
    });

    it('should create nothing at the wallet for a refused order', async () => {
      const before = { ...world.alipay.calls };

      expectError(await post(cny('1e3')), 400, { param: 'amount' });
      expectError(await post(cny('7.19')), 400, { param: 'amount' });

      expect(world.alipay.calls).toEqual(before);
    });
  });

  describe('a created order', () => {
    it.each([
      ['alipay', 'qrCode'],
      ['wechatpay', 'codeUrl'],
    ] as const)('should show a %s order exactly as the contract shapes it', async (method, instruction) => {
      await putSettings(world, { cnyPerUsd: '7.3', orderTtlMinutes: 45 });
      const before = Date.now();

      const response = await post({ currency: 'CNY', method, amount: '100' });

      expect(response.status).toBe(201);
      const topup = response.body;
      expect(topup).toEqual({
        id: expect.stringMatching(UUID),
        status: 'pending',
        currency: 'CNY',
        method,
        amount: '100.00',
        // 100 ÷ 7.3 = 13.698630136986…, rounded down to a nano-dollar.
        credit: '13.698630136',
        rate: '7.3',
        createdAt: expect.stringMatching(ISO_DATE_TIME),
        expiresAt: expect.stringMatching(ISO_DATE_TIME),
        instructions: { [instruction]: expect.stringMatching(/^\S+$/) },
      });
      expect(Date.parse(topup.createdAt)).toBeGreaterThanOrEqual(before - 1_000);
      expect(Date.parse(topup.createdAt)).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(Date.parse(topup.expiresAt) - Date.parse(topup.createdAt)).toBe(45 * MINUTE_MS);
      expect(world.wallet(method).order(orderNoOf(topup.id))).toMatchObject({ amount: '100.00', state: 'WAIT' });
      expect((await get(`/console/topups/${topup.id}`)).body).toEqual(topup);
    });

    it('should keep its rate and credit when the operator changes the settings afterwards', async () => {
      await putSettings(world, { cnyPerUsd: '7.3' });
      const topup = await createTopup(world, customer, 'alipay', '100');

      await putSettings(world, { cnyPerUsd: '6.5', minTopupUsd: '50', orderTtlMinutes: 5 });
      const read = await get(`/console/topups/${topup.id}`);

      expect(read.body).toEqual(topup);
      const paid = await world.alipay.pay(orderNoOf(topup.id));
      expect(paid).toEqual([{ status: 200, body: 'success' }]);
      expect(await world.books.balance(customer)).toBe(usd('13.698630136'));
    });

    it('should be read by its owner, and by nobody else', async () => {
      const topup = await createTopup(world, customer, 'wechatpay', '50');
      const stranger = await world.gateway.newCustomer({ balance: '0' });

      expect(await get(`/console/topups/${topup.id}`)).toMatchObject({ status: 200, body: topup });
      expectError(await get(`/console/topups/${topup.id}`, stranger.token), 404, {
        code: 'not_found',
        param: 'topupId',
      });
      expectError(await get(`/console/topups/${randomUUID()}`), 404, { code: 'not_found', param: 'topupId' });
      expectError(await get('/console/topups/not-a-uuid'), 400, { code: null, param: 'topupId' });
    });
  });

  describe('the list', () => {
    it('should page through the own orders newest first, without repeats or gaps', async () => {
      const payer = await world.gateway.newCustomer({ balance: '0' });
      const created: any[] = [];
      for (const [index, method] of (['alipay', 'wechatpay', 'alipay', 'wechatpay', 'alipay'] as const).entries()) {
        created.push(await createTopup(world, payer, method, `${10 + index}`));
      }
      await world.alipay.pay(orderNoOf(created[2].id));
      const newestFirst = [...created].reverse().map((topup) => topup.id);

      const pages = await allPages(world, '/console/topups', payer.token, 2);

      expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
      expect(pages.flat().map((topup) => topup.id)).toEqual(newestFirst);
      expect(pages.flat().find((topup) => topup.id === created[2].id)).toMatchObject({
        status: 'paid',
        paidAt: expect.stringMatching(ISO_DATE_TIME),
      });
      const whole = await get('/console/topups', payer.token);
      expect(whole.body).toEqual({ data: pages.flat(), nextCursor: null });
    });

    it('should show another account none of them', async () => {
      await createTopup(world, await world.gateway.newCustomer({ balance: '0' }), 'alipay', '10');
      const stranger = await world.gateway.newCustomer({ balance: '0' });

      expect((await get('/console/topups', stranger.token)).body).toEqual({ data: [], nextCursor: null });
    });

    const forged = (position: unknown) => Buffer.from(JSON.stringify(position)).toString('base64url');
    it.each([
      ['/console/topups?cursor=garbage', 'cursor'],
      [`/console/topups?cursor=${forged(['not a number'])}`, 'cursor'],
      [`/console/topups?cursor=${forged([1])}`, 'cursor'],
      [`/console/topups?cursor=${forged(['1', '2'])}`, 'cursor'],
      ['/console/topups?limit=0', 'limit'],
      ['/console/topups?limit=201', 'limit'],
      ['/console/topups?limit=two', 'limit'],
      ['/console/topups?status=paid', 'status'],
    ])('should answer 400 naming the parameter for %s', async (path, param) => {
      expectError(await get(path), 400, { code: null, param });
    });
  });

  it('should answer 401 on every top-up route without a session', async () => {
    const topup = await createTopup(world, await world.gateway.newCustomer({ balance: '0' }), 'alipay', '10');
    const routes: [string, string, unknown?][] = [
      ['POST', '/console/topups', { currency: 'CNY', method: 'alipay', amount: '100' }],
      ['GET', '/console/topups'],
      ['GET', `/console/topups/${topup.id}`],
      ['POST', '/console/redemptions', { code: 'K7QX2-MPA9R-T4WZ8-HN3CD' }],
    ];
    for (const [method, path, body] of routes) {
      for (const token of [undefined, 'not-a-session', world.gateway.adminToken]) {
        const response = await world.gateway.call(method, path, { token, body });
        expect({ method, path, token, status: response.status, error: response.body.error?.type }).toEqual({
          method,
          path,
          token,
          status: 401,
          error: 'invalid_request_error',
        });
      }
    }
  });

  it('should count created orders in gateway_topups_total', async () => {
    const sample = async (labels: string) => {
      const metrics = await world.gateway.call('GET', '/metrics');
      expect(metrics.status).toBe(200);
      return Number(new RegExp(`^gateway_topups_total\\{${labels}\\} (\\S+)$`, 'm').exec(metrics.text)?.[1] ?? 0);
    };
    const before = await sample('method="alipay",status="pending"');
    const payer = await world.gateway.newCustomer({ balance: '0' });

    const first = await createTopup(world, payer, 'alipay', '20');
    await createTopup(world, payer, 'alipay', '30');
    await world.alipay.pay(orderNoOf(first.id));
    expectError(await post({ currency: 'CNY', method: 'alipay', amount: '1e3' }), 400, { param: 'amount' });

    expect(await sample('method="alipay",status="pending"')).toBe(before + 2);
  });
});

describe('console top-ups waiting for payment', () => {
  const world = usePaymentsWorld();

  it('should let an account have five waiting at once, and a sixth once one is paid', async () => {
    const payer = await world.gateway.newCustomer({ balance: '0' });
    const waiting = [];
    for (let index = 0; index < 5; index++) {
      waiting.push(await createTopup(world, payer, 'alipay', `${10 + index}`));
    }
    const sixth = { currency: 'CNY', method: 'wechatpay', amount: '10' };
    const refused = await world.gateway.call('POST', '/console/topups', { token: payer.token, body: sixth });
    expectError(refused, 429, { type: 'requests', code: 'rate_limit_exceeded' });
    expect(refused.body.error.message).toContain('At most 5 top-ups');
    expect(world.wechatpay.calls.create).toBe(0);

    await world.alipay.pay(orderNoOf(waiting[0].id));
    await createTopup(world, payer, 'wechatpay', '10');
  });

  it.each(['alipay', 'wechatpay'] as const)(
    'should answer 502 when %s cannot create the payment, and leave no order waiting',
    async (method) => {
      const payer = await world.gateway.newCustomer({ balance: '0' });
      world.wallet(method).failNext('create', 'down');

      const refused = await world.gateway.call('POST', '/console/topups', {
        token: payer.token,
        body: { currency: 'CNY', method, amount: '10' },
      });

      expectError(refused, 502, { type: 'server_error', code: 'upstream_unreachable' });
      const listed = await world.gateway.call('GET', '/console/topups', { token: payer.token });
      expect(listed.body.data).toEqual([expect.objectContaining({ status: 'expired', method, instructions: {} })]);
      await createTopup(world, payer, method, '10');
    },
  );

  it('should let no more than five of ten concurrent orders wait', async () => {
    const payer = await world.gateway.newCustomer({ balance: '0' });
    const tries = await Promise.all(
      Array.from({ length: 10 }, () =>
        world.gateway.call('POST', '/console/topups', {
          token: payer.token,
          body: { currency: 'CNY', method: 'alipay', amount: '10' },
        }),
      ),
    );

    expect(tries.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 201, 201, 429, 429, 429, 429, 429]);
  });

  it('should refuse the 21st order of a minute even while the wallet fails them all', async () => {
    const payer = await world.gateway.newCustomer({ balance: '0' });
    world.alipay.failNext('create', 'down', 20);
    const order = () =>
      world.gateway.call('POST', '/console/topups', {
        token: payer.token,
        body: { currency: 'CNY', method: 'alipay', amount: '10' },
      });
    for (let index = 0; index < 20; index++) {
      expect((await order()).status).toBe(502);
    }

    const refused = await order();
    expectError(refused, 429, { type: 'requests', code: 'rate_limit_exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('console top-ups on a gateway with only Alipay configured', () => {
  let alipay: FakeWallet;
  let gateway: TestGateway;

  beforeAll(async () => {
    alipay = await startFakeAlipay();
    const port = await freePort();
    gateway = await TestGateway.start({ PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...alipay.env }, undefined, port);
    const settings = await gateway.admin('PUT', '/admin/payments/settings', DEFAULT_SETTINGS);
    expect(settings.status).toBe(200);
  });
  afterAll(async () => {
    await gateway.close();
    await alipay.close();
  });

  it('should refuse WeChat Pay, naming method', async () => {
    const customer = await gateway.newCustomer({ balance: '0' });

    const response = await gateway.call('POST', '/console/topups', {
      token: customer.token,
      body: { currency: 'CNY', method: 'wechatpay', amount: '100' },
    });

    expectError(response, 400, { code: null, param: 'method' });
    expect(response.body.error.message).toMatch(/wechatpay/i);
    expect((await gateway.call('GET', '/console/topups', { token: customer.token })).body.data).toEqual([]);
  });
});
