import { scryptSync } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { hashPassword, verifyPassword } from 'src/modules/auth/password-hasher';
import { ApiError } from 'src/common/errors/api-error';
import { ScryptPool, WORKER_SOURCE } from 'src/modules/auth/scrypt-pool';

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

  it('should refuse a hash with 503 when its thread exits without a word, and hash the next on a new thread', async () => {
    // The real thread, except that this password makes it exit cleanly (no error event) before replying:
    // its listener runs first, being registered first.
    const quitter = new ScryptPool(
      `{
        const { parentPort } = require('node:worker_threads');
        parentPort.on('message', ({ password }) => { if (password === 'exit quietly') process.exit(0); });
      }
      ${WORKER_SOURCE}`,
    );
    const salt = Buffer.alloc(16);
    try {
      const [lost, kept] = await Promise.allSettled([
        quitter.derive('exit quietly', salt, 32, OPTIONS),
        quitter.derive('password', salt, 32, OPTIONS),
      ]);
      expect(lost.status).toBe('rejected');
      const refusal = (lost as PromiseRejectedResult).reason as ApiError;
      expect(refusal).toBeInstanceOf(ApiError);
      expect(refusal.toBody()).toMatchObject({ error: { type: 'server_error', code: 'server_overloaded' } });
      expect(refusal.status).toBe(503);
      expect(refusal.headers).toEqual({ 'retry-after': '1' });
      // The other hash, on a thread of its own, was not affected.
      expect(kept).toMatchObject({ status: 'fulfilled', value: scryptSync('password', salt, 32, OPTIONS) });

      await expect(quitter.derive('password', salt, 32, OPTIONS)).resolves.toHaveLength(32);
    } finally {
      await quitter.close();
    }
  }, 30_000);

  it('should end a thread that waited its idle time for a hash, and hash the next on a new one', async () => {
    const briefly = new ScryptPool(WORKER_SOURCE, 300);
    const salt = Buffer.alloc(16);
    try {
      await briefly.derive('password', salt, 32, OPTIONS);
      // Used again within its idle time: the same thread, kept.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await briefly.derive('password', salt, 32, OPTIONS);
      expect(briefly.threads).toBe(1);

      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(briefly.threads).toBe(0);
      await expect(briefly.derive('password', salt, 32, OPTIONS)).resolves.toEqual(
        scryptSync('password', salt, 32, OPTIONS),
      );
      expect(briefly.threads).toBe(1);
    } finally {
      await briefly.close();
    }
  }, 30_000);
});
