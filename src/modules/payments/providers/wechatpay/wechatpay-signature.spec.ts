import { generateKeyPairSync } from 'node:crypto';
import {
  authorizationHeader,
  MerchantSigner,
  newNonce,
  signatureMessage,
  signMessage,
  verifyMessage,
} from 'src/modules/payments/providers/wechatpay/wechatpay-signature';

const merchant = generateKeyPairSync('rsa', { modulusLength: 2048 });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signer: MerchantSigner = {
  mchId: '1900000109',
  certSerial: '5157F09EFDC096DE15EBE81A47057A72',
  privateKey: merchant.privateKey,
};

/** The Authorization header's fields, as the wallet reads them. */
function fieldsOf(header: string): Record<string, string> {
  const [scheme, rest] = [header.slice(0, header.indexOf(' ')), header.slice(header.indexOf(' ') + 1)];
  expect(scheme).toBe('WECHATPAY2-SHA256-RSA2048');
  return Object.fromEntries([...rest.matchAll(/(\w+)="([^"]*)"/g)].map(([, name, value]) => [name, value]));
}

describe('wechatpay-signature', () => {
  it('should end every part of the signed message with a newline, an empty body included', () => {
    const message = signatureMessage(['GET', '/v3/pay/transactions/out-trade-no/abc?mchid=1', '1700000000', 'N1', '']);

    expect(message.toString()).toBe('GET\n/v3/pay/transactions/out-trade-no/abc?mchid=1\n1700000000\nN1\n\n');
  });

  it('should keep raw body bytes exactly as they are', () => {
    const body = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);

    expect(signatureMessage(['1', 'n', body])).toEqual(Buffer.concat([Buffer.from('1\nn\n'), body, Buffer.from('\n')]));
  });

  it('should sign the request line, timestamp, nonce and body with the merchant key', () => {
    const body = '{"mchid":"1900000109"}';
    const header = authorizationHeader(signer, {
      method: 'POST',
      pathWithQuery: '/v3/pay/transactions/out-trade-no/abc/close',
      body,
      timestamp: 1700000000,
      nonce: 'C0FFEE',
    });
    const fields = fieldsOf(header);

    expect(fields).toMatchObject({
      mchid: '1900000109',
      nonce_str: 'C0FFEE',
      timestamp: '1700000000',
      serial_no: signer.certSerial,
    });
    const expected = Buffer.from(`POST\n/v3/pay/transactions/out-trade-no/abc/close\n1700000000\nC0FFEE\n${body}\n`);
    expect(verifyMessage(expected, fields.signature, merchant.publicKey)).toBe(true);
    expect(verifyMessage(Buffer.from(`GET${expected.toString().slice(4)}`), fields.signature, merchant.publicKey)).toBe(
      false,
    );
    expect(verifyMessage(expected, fields.signature, stranger.publicKey)).toBe(false);
  });

  it('should use a fresh nonce and the current time when none is given', () => {
    const request = { method: 'GET' as const, pathWithQuery: '/v3/x', body: '' };
    const [first, second] = [
      fieldsOf(authorizationHeader(signer, request)),
      fieldsOf(authorizationHeader(signer, request)),
    ];

    expect(first.nonce_str).not.toBe(second.nonce_str);
    expect(Math.abs(Number(first.timestamp) - Date.now() / 1000)).toBeLessThan(5);
    expect(newNonce()).toMatch(/^[0-9A-F]{32}$/);
  });

  it('should say no, not throw, for a signature that is not base64 of a signature', () => {
    const message = signatureMessage(['1', 'n', '{}']);

    expect(verifyMessage(message, signMessage(message, merchant.privateKey), merchant.publicKey)).toBe(true);
    expect(verifyMessage(message, 'not a signature', merchant.publicKey)).toBe(false);
    expect(verifyMessage(message, '', merchant.publicKey)).toBe(false);
  });
});
