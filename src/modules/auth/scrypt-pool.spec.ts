import { scryptSync } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { hashPassword, verifyPassword } from 'src/modules/auth/password-hasher';
import { ScryptPool } from 'src/modules/auth/scrypt-pool';

const OPTIONS = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

describe(ScryptPool.name, () => {
  let sut: ScryptPool;

  beforeEach(() => {
    sut = new ScryptPool();
  });
  afterEach(() => sut.close());

  it("should derive the same keys as Node's scrypt, so stored hashes keep verifying", async () => {
    const salt = Buffer.from('0123456789abcdef');
    expect((await sut.derive('pässword', salt, 32, OPTIONS)).equals(scryptSync('pässword', salt, 32, OPTIONS))).toBe(
      true,
    );

    const stored = await hashPassword('correct horse battery staple');
    await expect(verifyPassword('correct horse battery staple', stored, sut.derive)).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery stapler', stored, sut.derive)).resolves.toBe(false);
    const fromPool = await hashPassword('correct horse battery staple', sut.derive);
    await expect(verifyPassword('correct horse battery staple', fromPool)).resolves.toBe(true);
  }, 30_000);

  it("should leave libuv's threadpool free for DNS lookups and file reads while hashing", async () => {
    const salt = Buffer.from('0123456789abcdef');
    // Four hashes at once: on libuv's pool of four they would hold every thread until one finished.
    let firstHashDone = Infinity;
    const hashes = Array.from({ length: 4 }, () =>
      sut.derive('password', salt, 32, OPTIONS).then(() => (firstHashDone = Math.min(firstHashDone, Date.now()))),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    await stat(__filename);
    const statDone = Date.now();
    await Promise.all(hashes);
    expect(statDone).toBeLessThan(firstHashDone);
  }, 30_000);

  it('should refuse an impossible parameter set without losing its thread', async () => {
    const salt = Buffer.alloc(16);
    await expect(sut.derive('password', salt, 32, { ...OPTIONS, N: 3 })).rejects.toThrow(/scrypt failed/);
    await expect(sut.derive('password', salt, 32, OPTIONS)).resolves.toHaveLength(32);
  }, 30_000);
});
