import { usd } from 'test/e2e/billing-helpers';
import { createTopup, orderNoOf, usePaymentsWorld } from 'test/e2e/payments-helpers';

describe('payments: a top-up paid in a wallet', () => {
  const world = usePaymentsWorld();

  it.each(['alipay', 'wechatpay'] as const)(
    'should credit a %s payment once, from its notification alone',
    async (method) => {
      const customer = await world.gateway.newCustomer({ balance: '0' });
      const topup = await createTopup(world, customer, method, '100');
      expect(topup).toMatchObject({ status: 'pending', currency: 'CNY', method, amount: '100.00', rate: '7.2' });
      expect(topup.credit).toBe('13.888888888');
      expect(method === 'alipay' ? topup.instructions.qrCode : topup.instructions.codeUrl).toEqual(expect.any(String));

      const answers = await world.wallet(method).pay(orderNoOf(topup.id));
      expect(answers).toEqual([method === 'alipay' ? { status: 200, body: 'success' } : { status: 204, body: '' }]);

      expect(await world.books.balance(customer)).toBe(usd('13.888888888'));
      const read = await world.gateway.call('GET', `/console/topups/${topup.id}`, { token: customer.token });
      expect(read.body).toMatchObject({ status: 'paid', paidAt: expect.any(String) });
    },
  );

  it('should count created orders in the API and credited ones in the worker', async () => {
    const customer = await world.gateway.newCustomer({ balance: '0' });
    const topup = await createTopup(world, customer, 'alipay', '7.20');
    await world.alipay.pay(orderNoOf(topup.id));

    const api = await world.gateway.call('GET', '/metrics');
    expect(api.text).toMatch(/^gateway_topups_total\{method="alipay",status="pending"\} [1-9]/m);
    const worker = await (await fetch(world.workerMetricsUrl)).text();
    expect(worker).toMatch(/^gateway_topups_total\{method="alipay",status="paid"\} [1-9]/m);
    expect(worker).toMatch(/^gateway_payment_confirm_seconds_count\{via="webhook"\} [1-9]/m);
    expect(worker).toMatch(/^gateway_payment_confirmation_lag_seconds_count\{via="webhook"\} [1-9]/m);
  });

  it.each([
    ['alipay', 'application/x-www-form-urlencoded', `notify_id=${'x'.repeat(70_000)}`],
    ['wechatpay', 'application/json', JSON.stringify({ id: 'x'.repeat(70_000) })],
  ])('should answer 413 to a %s notification over 64 KiB', async (method, contentType, body) => {
    const response = await world.gateway.call('POST', `/webhooks/${method}`, {
      body,
      headers: { 'content-type': contentType },
    });

    // Refused before the webhook reads it, so not in the wallet's answer format: a wallet acts on the status.
    expect(response.status).toBe(413);
  });
});
