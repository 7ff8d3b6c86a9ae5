import { randomBytes, scrypt, ScryptOptions, timingSafeEqual } from 'node:crypto';
import { DEFAULT_PASSWORD_HASH_COST } from 'src/config/app-config';

// scrypt is memory-hard (N·r·128 bytes = 32 MiB per hash at N = 2^15) and built into Node, so no
// native addon. maxmem admits N up to 2^17 (PASSWORD_HASH_COST's ceiling, 128 MiB) and no further: a
// stored hash naming a larger N is refused by scrypt, not computed.
const PARAMS = { r: 8, p: 1, maxmem: 2 ** 17 * 128 * 8 + 2 ** 20 };
const KEY_LENGTH = 32;

/** Computes one scrypt key; the API passes its own threads (ScryptPool), tools and tests take libuv's. */
export type DeriveKey = (password: string, salt: Buffer, keyLength: number, options: ScryptOptions) => Promise<Buffer>;

export const libuvScrypt: DeriveKey = (password, salt, keyLength, options) =>
  new Promise((resolve, reject) =>
    scrypt(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );

/**
 * Format: `scrypt$N$r$p$<salt b64>$<hash b64>`, so the cost (N = 2^`cost`) can change later without
 * breaking old hashes.
 */
export async function hashPassword(
  password: string,
  derive: DeriveKey = libuvScrypt,
  cost = DEFAULT_PASSWORD_HASH_COST,
): Promise<string> {
  const salt = randomBytes(16);
  const params = { ...PARAMS, N: 2 ** cost };
  const key = await derive(password.normalize('NFKC'), salt, KEY_LENGTH, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), key.toString('base64')].join('$');
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

/** A well-formed hash at N = 2^`cost` that no password matches (its key is all zeros). */
export function placeholderHash(cost = DEFAULT_PASSWORD_HASH_COST): string {
  const zeros = (bytes: number) => Buffer.alloc(bytes).toString('base64');
  return ['scrypt', 2 ** cost, PARAMS.r, PARAMS.p, zeros(16), zeros(KEY_LENGTH)].join('$');
}
