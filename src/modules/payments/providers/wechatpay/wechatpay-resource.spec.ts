import { createCipheriv, randomBytes } from 'node:crypto';
import { decryptResource, EncryptedResource } from 'src/modules/payments/providers/wechatpay/wechatpay-resource';

const apiV3Key = Buffer.from('0123456789abcdefghijklmnopqrstuv', 'utf8');

/** Seals `plain` as WeChat Pay does: AES-256-GCM, 12-character nonce, tag appended, base64. */
function seal(
  plain: string,
  key = apiV3Key,
  nonce = 'n0nce1234567',
  associatedData = 'transaction',
): EncryptedResource {
  const cipher = createCipheriv('aes-256-gcm', key, Buffer.from(nonce));
  cipher.setAAD(Buffer.from(associatedData));
  const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return {
    algorithm: 'AEAD_AES_256_GCM',
    ciphertext: sealed.toString('base64'),
    nonce,
    associated_data: associatedData,
  };
}

describe('decryptResource', () => {
  const plain = '{"out_trade_no":"abc","amount":{"total":1230}}';

  it('should open what the APIv3 key sealed', () => {
    expect(decryptResource(apiV3Key, seal(plain))).toBe(plain);
  });

  it('should refuse a resource whose ciphertext was changed', () => {
    const resource = seal(plain);
    const bytes = Buffer.from(resource.ciphertext, 'base64');
    bytes[3] ^= 0x01;

    expect(() => decryptResource(apiV3Key, { ...resource, ciphertext: bytes.toString('base64') })).toThrow();
  });

  it('should refuse another key, another nonce or other associated data', () => {
    const resource = seal(plain);

    expect(() => decryptResource(randomBytes(32), resource)).toThrow();
    expect(() => decryptResource(apiV3Key, { ...resource, nonce: 'n0nce1234568' })).toThrow();
    expect(() => decryptResource(apiV3Key, { ...resource, associated_data: 'refund' })).toThrow();
  });

  it('should refuse another algorithm and a ciphertext shorter than its tag', () => {
    expect(() => decryptResource(apiV3Key, { ...seal(plain), algorithm: 'AEAD_SM4_GCM' })).toThrow(/AEAD_AES_256_GCM/);
    expect(() => decryptResource(apiV3Key, { ...seal(plain), ciphertext: 'AAAA' })).toThrow();
  });
});
