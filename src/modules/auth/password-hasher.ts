import { randomBytes, scrypt, ScryptOptions, timingSafeEqual } from 'node:crypto';

// scrypt is memory-hard (N·r·128 bytes = 32 MiB per hash here) and built into Node, so no native addon.
const PARAMS = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

/** Computes one scrypt key; the API passes its own threads (ScryptPool), tools and tests take libuv's. */
export type DeriveKey = (password: string, salt: Buffer, keyLength: number, options: ScryptOptions) => Promise<Buffer>;

export const libuvScrypt: DeriveKey = (password, salt, keyLength, options) =>
  new Promise((resolve, reject) =>
    scrypt(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );

/** Format: `scrypt$N$r$p$<salt b64>$<hash b64>`, so parameters can be raised later without breaking old hashes. */
export async function hashPassword(password: string, derive: DeriveKey = libuvScrypt): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password.normalize('NFKC'), salt, KEY_LENGTH, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(
  password: string,
  stored: string,
  derive: DeriveKey = libuvScrypt,
): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !hash) {
    return false;
  }
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password.normalize('NFKC'), Buffer.from(salt, 'base64'), KEY_LENGTH, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: PARAMS.maxmem,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
