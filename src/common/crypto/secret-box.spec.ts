import { randomBytes } from 'node:crypto';
import { SecretBox } from 'src/common/crypto/secret-box';

describe(SecretBox.name, () => {
  const sut = new SecretBox(randomBytes(32));

  it('should round-trip a secret without storing it in clear', () => {
    const sealed = sut.seal('sk-upstream-secret');
    expect(sealed).not.toContain('sk-upstream-secret');
    expect(sut.open(sealed)).toBe('sk-upstream-secret');
  });

  it('should use a fresh nonce each time', () => {
    expect(sut.seal('same')).not.toBe(sut.seal('same'));
  });

  it('should refuse a tampered or foreign ciphertext', () => {
    const sealed = sut.seal('secret');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('x').toString('base64');
    expect(() => sut.open(parts.join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
  });
});
