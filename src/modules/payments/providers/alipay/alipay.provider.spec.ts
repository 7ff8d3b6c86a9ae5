import { generateKeyPairSync } from 'node:crypto';
import { AlipayProvider } from 'src/modules/payments/providers/alipay/alipay.provider';
import { alipaySigningString, signRsa2, verifyRsa2 } from 'src/modules/payments/providers/alipay/alipay-signature';
import { PaymentOrder, ProviderUnavailable } from 'src/modules/payments/providers/payment-provider';
import { callProvider } from 'src/modules/payments/providers/provider-http';

jest.mock('src/modules/payments/providers/provider-http');

const merchant = generateKeyPairSync('rsa', { modulusLength: 2048 });
const alipay = generateKeyPairSync('rsa', { modulusLength: 2048 });
const config = {
  appId: '2021000000000042',
  privateKey: merchant.privateKey,
  alipayPublicKey: alipay.publicKey,
  gatewayUrl: 'https://alipay.test/gateway.do',
};
const NOTIFY_URL = 'https://gateway.test/webhooks/alipay';
const ORDER: PaymentOrder = {
  orderNo: '0123456789abcdef0123456789abcdef',
  amount: '12.30',
  amountFen: 1230n,
  subject: 'Balance',
  expiresAt: new Date('2024-06-01T12:30:00Z'),
};

const mockedCall = jest.mocked(callProvider);

/** Alipay's answer to `method`: the response member signed as written. */
function answer(method: string, response: object, signed = true) {
  const text = JSON.stringify(response);
  const sign = signed ? `,"sign":"${signRsa2(text, alipay.privateKey)}"` : '';
  return { status: 200, headers: {}, text: `{"${method.replace(/\./g, '_')}_response":${text}${sign}}` };
}

/** The form parameters of the one call made. */
function sentParams(): Record<string, string> {
  const [url, init] = mockedCall.mock.calls[0];
  expect(url).toBe(config.gatewayUrl);
  expect(init.headers).toEqual({ 'content-type': 'application/x-www-form-urlencoded;charset=utf-8' });
  return Object.fromEntries(new URLSearchParams(init.body));
}

describe(AlipayProvider.name, () => {
  const sut = new AlipayProvider(config, NOTIFY_URL);

  beforeEach(() => {
    mockedCall.mockReset();
    jest.useFakeTimers({ now: new Date('2024-06-01T12:00:30Z'), doNotFake: ['nextTick', 'setImmediate'] });
  });

  afterEach(() => jest.useRealTimers());

  it('should send a precreate signed over its sorted parameters, timing out when the order expires', async () => {
    mockedCall.mockResolvedValue(answer('alipay.trade.precreate', { code: '10000', qr_code: 'https://qr/1' }));

    await expect(sut.createPayment(ORDER)).resolves.toEqual({ qrCode: 'https://qr/1' });

    const params = sentParams();
    expect(params).toEqual({
      app_id: config.appId,
      method: 'alipay.trade.precreate',
      format: 'JSON',
      charset: 'utf-8',
      sign_type: 'RSA2',
      timestamp: '2024-06-01 20:00:30',
      version: '1.0',
      notify_url: NOTIFY_URL,
      biz_content: expect.any(String),
      sign: expect.any(String),
    });
    // 29.5 minutes left: Alipay is told 29, so it stops taking payment before our last query.
    expect(JSON.parse(params.biz_content)).toEqual({
      out_trade_no: ORDER.orderNo,
      total_amount: '12.30',
      subject: 'Balance',
      timeout_express: '29m',
    });
    expect(verifyRsa2(alipaySigningString(params, ['sign']), params.sign, merchant.publicKey)).toBe(true);
  });

  it('should give an order already past its expiry the shortest timeout Alipay takes', async () => {
    mockedCall.mockResolvedValue(answer('alipay.trade.precreate', { code: '10000', qr_code: 'https://qr/1' }));

    await sut.createPayment({ ...ORDER, expiresAt: new Date('2024-06-01T11:00:00Z') });

    expect(JSON.parse(sentParams().biz_content).timeout_express).toBe('1m');
  });

  it('should count a finished trade as paid', async () => {
    const response = { code: '10000', out_trade_no: ORDER.orderNo, trade_no: '2024', total_amount: '12.30' };
    mockedCall.mockResolvedValue(answer('alipay.trade.query', { ...response, trade_status: 'TRADE_FINISHED' }));

    await expect(sut.query(ORDER)).resolves.toEqual({
      state: 'paid',
      evidence: { provider: 'alipay', tradeNo: '2024', amount: '12.30', rawStatus: 'TRADE_FINISHED' },
    });
  });

  it('should not let a paid answer about another order pay this one', async () => {
    const response = { code: '10000', out_trade_no: 'another', trade_no: '2024', total_amount: '12.30' };
    mockedCall.mockResolvedValue(answer('alipay.trade.query', { ...response, trade_status: 'TRADE_SUCCESS' }));

    await expect(sut.query(ORDER)).rejects.toThrow(
      new ProviderUnavailable('Alipay alipay.trade.query: the answer is about another out_trade_no'),
    );
  });

  it.each([
    ['a status other than 200', { status: 502, headers: {}, text: '' }, 'HTTP status 502'],
    [
      'an unsigned error',
      answer('alipay.trade.query', { code: '40002', sub_code: 'isv.invalid-app-id' }, false),
      'the answer is unsigned (answered code 40002 isv.invalid-app-id)',
    ],
    [
      'an error_response',
      { status: 200, headers: {}, text: '{"error_response":{"code":"40002","sub_code":"isv.invalid-method"}}' },
      'answered code 40002 isv.invalid-method',
    ],
    [
      'a paid answer without trade_no',
      answer('alipay.trade.query', {
        code: '10000',
        out_trade_no: ORDER.orderNo,
        trade_status: 'TRADE_SUCCESS',
        total_amount: '1.00',
      }),
      'the answer has no trade_no',
    ],
  ])('should name the reason, and nothing of the body, for %s', async (_, reply, reason) => {
    mockedCall.mockResolvedValue(reply);

    await expect(sut.query(ORDER)).rejects.toThrow(new ProviderUnavailable(`Alipay alipay.trade.query: ${reason}`));
  });

  it('should report a transport failure as unavailable', async () => {
    mockedCall.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:1'));

    await expect(sut.close(ORDER)).rejects.toThrow(
      new ProviderUnavailable('Alipay alipay.trade.close: connect ECONNREFUSED 127.0.0.1:1'),
    );
  });
});
