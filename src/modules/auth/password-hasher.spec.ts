import { hashPassword, placeholderHash, verifyPassword } from 'src/modules/auth/password-hasher';

describe('password hashing', () => {
  it('should verify the right password and refuse a wrong one', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(stored).not.toContain('correct horse');
    await expect(verifyPassword('correct horse battery staple', stored)).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery stapler', stored)).resolves.toBe(false);
  });

  it('should hash at the cost asked for, and still verify a hash made at another', async () => {
    const cheap = await hashPassword('correct horse battery staple', undefined, 10);
    expect(cheap).toMatch(/^scrypt\$1024\$8\$1\$/);
    await expect(verifyPassword('correct horse battery staple', cheap)).resolves.toBe(true);
    await expect(verifyPassword('correct horse', cheap)).resolves.toBe(false);
  });

  it('should refuse to compute a stored hash that names an N above the ceiling (2^17)', async () => {
    const stored = await hashPassword('correct horse battery staple', undefined, 10);
    const inflated = stored.replace(/^scrypt\$1024\$/, `scrypt$${2 ** 18}$`);
    await expect(verifyPassword('correct horse battery staple', inflated)).rejects.toThrow(/memory/i);
  });

  it('should make a placeholder at the cost asked for that no password matches', async () => {
    expect(placeholderHash()).toBe(
      'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
    );
    expect(placeholderHash(10)).toMatch(/^scrypt\$1024\$/);
    await expect(verifyPassword('', placeholderHash(10))).resolves.toBe(false);
    await expect(verifyPassword('password-123', placeholderHash(10))).resolves.toBe(false);
  });

  it('should salt every hash', async () => {
    expect(await hashPassword('same password')).not.toBe(await hashPassword('same password'));
  });
});
