import { createCipheriv, generateKeyPairSync, KeyObject } from 'node:crypto';
import { WechatPayConfig } from 'src/config/payments-config';
import { NotificationRejected, RawNotification } from 'src/modules/payments/providers/payment-provider';
import { verifyWechatPayNotification } from 'src/modules/payments/providers/wechatpay/wechatpay-notification';
import { signatureMessage, signMessage } from 'src/modules/payments/providers/wechatpay/wechatpay-signature';

const platform = generateKeyPairSync('rsa', { modulusLength: 2048 });
const config: WechatPayConfig = {
  mchId: '1900000109',
  appId: 'wxd678efh567hg6787',
  apiV3Key: Buffer.from('0123456789abcdefghijklmnopqrstuv'),
  privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
  certSerial: 'SERIAL',
  platformPublicKey: platform.publicKey,
  platformPublicKeyId: 'PUB_KEY_ID_0119000001092024',
  baseUrl: 'http://127.0.0.1:1',
};
const NOW_MS = 1_700_000_000_000;
const transaction = {
  mchid: config.mchId,
  appid: config.appId,
  out_trade_no: 'a'.repeat(32),
  transaction_id: '4200000000202401011234567890',
  trade_type: 'NATIVE',
  trade_state: 'SUCCESS',
  amount: { total: 1230, payer_total: 1230, currency: 'CNY', payer_currency: 'CNY' },
};

interface Sending {
  plain?: object;
  key?: Buffer;
  signingKey?: KeyObject;
  timestamp?: number;
  serial?: string;
}

/** A notification as WeChat Pay sends it, with `sending` changing one thing. */
function notification(sending: Sending = {}): RawNotification {
  const nonce = 'r3s0urc3n0nc';
  const cipher = createCipheriv('aes-256-gcm', sending.key ?? config.apiV3Key, Buffer.from(nonce));
  cipher.setAAD(Buffer.from('transaction'));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(sending.plain ?? transaction)), cipher.final()]);
  const ciphertext = Buffer.concat([sealed, cipher.getAuthTag()]).toString('base64');
  const resource = {
    original_type: 'transaction',
    algorithm: 'AEAD_AES_256_GCM',
    ciphertext,
    associated_data: 'transaction',
    nonce,
  };
  const body = Buffer.from(JSON.stringify({ id: 'EV-1', event_type: 'TRANSACTION.SUCCESS', resource }));
  const timestamp = String(sending.timestamp ?? NOW_MS / 1000);
  const signature = signMessage(
    signatureMessage([timestamp, 'HEADERNONCE', body]),
    sending.signingKey ?? platform.privateKey,
  );
  const headers = {
    'wechatpay-timestamp': timestamp,
    'wechatpay-nonce': 'HEADERNONCE',
    'wechatpay-signature': signature,
    'wechatpay-serial': sending.serial ?? config.platformPublicKeyId,
  };
  return { headers, body };
}

function rejection(raw: RawNotification): string {
  try {
    verifyWechatPayNotification(config, raw, NOW_MS);
  } catch (error) {
    expect(error).toBeInstanceOf(NotificationRejected);
    return (error as NotificationRejected).reason;
  }
  throw new Error('the notification was accepted');
}

describe(verifyWechatPayNotification.name, () => {
  it('should hand over the order, the trade number and the amount of a genuine notification', () => {
    expect(verifyWechatPayNotification(config, notification(), NOW_MS)).toEqual({
      orderNo: 'a'.repeat(32),
      paid: true,
      evidence: { provider: 'wechatpay', tradeNo: transaction.transaction_id, amount: '12.30', rawStatus: 'SUCCESS' },
    });
  });

  it('should read the signature headers whatever their case', () => {
    const raw = notification();
    const headers = Object.fromEntries(Object.entries(raw.headers).map(([name, value]) => [name.toUpperCase(), value]));

    expect(verifyWechatPayNotification(config, { ...raw, headers }, NOW_MS).paid).toBe(true);
  });

  it('should say a transaction in another state is not paid', () => {
    const raw = notification({ plain: { ...transaction, trade_state: 'CLOSED' } });

    expect(verifyWechatPayNotification(config, raw, NOW_MS)).toMatchObject({
      paid: false,
      evidence: { rawStatus: 'CLOSED' },
    });
  });

  it('should refuse a body changed after signing, before trying to decrypt it', () => {
    const raw = notification();
    const other = notification({ key: Buffer.alloc(32), plain: { ...transaction, amount: { total: 1 } } });

    expect(rejection({ ...raw, body: other.body })).toBe('bad_signature');
    expect(rejection(notification({ signingKey: config.privateKey }))).toBe('bad_signature');
  });

  it('should accept a timestamp up to five minutes off now, and no further', () => {
    expect(verifyWechatPayNotification(config, notification({ timestamp: NOW_MS / 1000 - 300 }), NOW_MS).paid).toBe(
      true,
    );
    expect(rejection(notification({ timestamp: NOW_MS / 1000 - 301 }))).toBe('stale_timestamp');
    expect(rejection(notification({ timestamp: NOW_MS / 1000 + 301 }))).toBe('stale_timestamp');
  });

  it.each([
    ['a platform key we do not know', { serial: 'PUB_KEY_ID_OTHER' }, 'unknown_key'],
    ['a resource sealed with another key', { key: Buffer.alloc(32, 7) }, 'decrypt_failed'],
    ['another merchant', { plain: { ...transaction, mchid: '1900000110' } }, 'wrong_app'],
    ['another app', { plain: { ...transaction, appid: 'wx0000000000000000' } }, 'wrong_app'],
    ['a transaction without its amount', { plain: { ...transaction, amount: undefined } }, 'malformed'],
  ])('should refuse %s', (_name, sending: Sending, reason) => {
    expect(rejection(notification(sending))).toBe(reason);
  });

  it('should refuse a missing header, a body that is not JSON and a body over 64 KiB as malformed', () => {
    const raw = notification();
    const { ['wechatpay-nonce']: _nonce, ...withoutNonce } = raw.headers;

    expect(rejection({ ...raw, headers: withoutNonce })).toBe('malformed');
    expect(rejection({ ...raw, headers: { ...raw.headers, 'wechatpay-nonce': ['a', 'b'] } })).toBe('malformed');
    expect(rejection({ ...raw, body: Buffer.from('garbage') })).toBe('malformed');
    expect(rejection({ ...raw, body: Buffer.from('{"resource":{}}') })).toBe('malformed');
    expect(rejection({ ...raw, body: Buffer.alloc(64 * 1024 + 1, 0x20) })).toBe('malformed');
  });
});
