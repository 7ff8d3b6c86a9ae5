import { generateKeyPairSync } from 'node:crypto';
import { ConfigError, loadConfig } from 'src/config/app-config';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();

const alipay = { ALIPAY_APP_ID: '2021000000000000', ALIPAY_PRIVATE_KEY: PRIVATE_PEM, ALIPAY_PUBLIC_KEY: PUBLIC_PEM };
const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env }).payments;

describe('payments configuration', () => {
  it('should turn a wallet on only with a public URL and all of its variables', () => {
    expect(load({}).alipay).toBeNull();
    expect(load(alipay).alipay).toBeNull();
    const config = load({ ...alipay, PUBLIC_BASE_URL: 'https://gw.example.com/' });
    expect(config.publicBaseUrl).toBe('https://gw.example.com');
    expect(config.alipay).toMatchObject({
      appId: '2021000000000000',
      gatewayUrl: 'https://openapi.alipay.com/gateway.do',
    });
    expect(config.wechatpay).toBeNull();
  });

  it('should name the missing variable of a half-configured wallet', () => {
    expect(() => load({ ALIPAY_APP_ID: 'x', ALIPAY_PRIVATE_KEY: PRIVATE_PEM })).toThrow(
      new ConfigError(
        'Missing environment variable ALIPAY_PUBLIC_KEY: set all of ALIPAY_APP_ID, ALIPAY_PRIVATE_KEY, ALIPAY_PUBLIC_KEY or none',
      ),
    );
  });

  it('should name a key that is not an RSA key in PEM', () => {
    expect(() => load({ ...alipay, ALIPAY_PRIVATE_KEY: 'not a key' })).toThrow(
      new ConfigError('Invalid environment variable ALIPAY_PRIVATE_KEY: must be an RSA private key in PEM'),
    );
    expect(() => load({ ...alipay, ALIPAY_PUBLIC_KEY: PRIVATE_PEM.replace('PRIVATE', 'PUBLIC') })).toThrow(ConfigError);
  });

  it('should take PEM keys written on one line with \\n escapes', () => {
    const oneLine = { ...alipay, ALIPAY_PRIVATE_KEY: PRIVATE_PEM.replace(/\n/g, '\\n'), PUBLIC_BASE_URL: 'http://x' };
    expect(load(oneLine).alipay?.privateKey.asymmetricKeyType).toBe('rsa');
  });

  it('should poll at 30 s, 1, 2 and 5 min unless told otherwise', () => {
    expect(load({}).pollDelaysMs).toEqual([30_000, 60_000, 120_000, 300_000]);
    expect(load({ PAYMENT_POLL_DELAYS_MS: '500, 1000' }).pollDelaysMs).toEqual([500, 1000]);
    expect(() => load({ PAYMENT_POLL_DELAYS_MS: '1e3' })).toThrow(/PAYMENT_POLL_DELAYS_MS/);
    expect(() => load({ PAYMENT_POLL_DELAYS_MS: '500,0' })).toThrow(/PAYMENT_POLL_DELAYS_MS: each delay/);
  });

  it('should query expired orders for late payments for 24 h unless told otherwise', () => {
    expect(load({}).latePaymentHours).toBe(24);
    expect(load({ ORDER_LATE_PAYMENT_HOURS: '0' }).latePaymentHours).toBe(0);
    expect(load({ ORDER_LATE_PAYMENT_HOURS: '72' }).latePaymentHours).toBe(72);
    expect(() => load({ ORDER_LATE_PAYMENT_HOURS: '-1' })).toThrow(/ORDER_LATE_PAYMENT_HOURS/);
  });
});
