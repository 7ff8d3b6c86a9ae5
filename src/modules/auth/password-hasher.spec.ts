import { hashPassword, verifyPassword } from 'src/modules/auth/password-hasher';

describe('password hashing', () => {
  it('should verify the right password and refuse a wrong one', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(stored).not.toContain('correct horse');
    await expect(verifyPassword('correct horse battery staple', stored)).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery stapler', stored)).resolves.toBe(false);
  });

  it('should salt every hash', async () => {
    expect(await hashPassword('same password')).not.toBe(await hashPassword('same password'));
  });
});
