import { createHash, randomBytes } from 'node:crypto';

/** 32 letters and digits, none that read alike (no I, O, 0, 1): 5 bits a character. */
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
/** 20 characters: 100 bits from the CSPRNG, beyond any guessing however many codes are live. */
export const CODE_LENGTH = 20;
const GROUP = 5;

/** A new code, grouped for reading aloud: `K7QX2-MPA9R-T4WZ8-HN3CD`. */
export function newRedemptionCode(): string {
  // 256 is a multiple of 32, so masking a random byte picks every character with the same chance.
  const characters = [...randomBytes(CODE_LENGTH)].map((byte) => ALPHABET[byte & 31]);
  const groups: string[] = [];
  for (let at = 0; at < CODE_LENGTH; at += GROUP) {
    groups.push(characters.slice(at, at + GROUP).join(''));
  }
  return groups.join('-');
}

/** The code as typed, without case, spaces or dashes; null when it cannot be one of ours. */
export function normalizeRedemptionCode(typed: string): string | null {
  const code = typed.replace(/[\s-]/g, '').toUpperCase();
  return code.length === CODE_LENGTH && [...code].every((character) => ALPHABET.includes(character)) ? code : null;
}

/** What is stored: the code's SHA-256. The code has 100 random bits, so no salt or slow hash is needed. */
export function hashRedemptionCode(normalized: string): string {
  return createHash('sha256').update(normalized).digest('hex');
}

/** What lists show of a code: its first group (25 of its 100 bits), enough to tell codes apart, never to redeem one. */
export function redemptionCodePrefix(code: string): string {
  return code.slice(0, GROUP);
}
