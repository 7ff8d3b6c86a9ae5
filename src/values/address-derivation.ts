import { secp256k1 } from '@noble/curves/secp256k1';
import { sha256 } from '@noble/hashes/sha2';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils';
import { createBase58check } from '@scure/base';
import { HDKey } from '@scure/bip32';

const base58check = createBase58check(sha256);
/** TRON's mainnet address prefix byte. */
const TRON_PREFIX = 0x41;

/**
 * The last 20 bytes of keccak256 of the uncompressed public key without its 0x04 prefix: the account
 * both chains derive from a secp256k1 key.
 */
function accountBytes(compressedPublicKey: Uint8Array): Uint8Array {
  const uncompressed = secp256k1.ProjectivePoint.fromHex(compressedPublicKey).toRawBytes(false);
  return keccak_256(uncompressed.subarray(1)).subarray(12);
}

/** The public key of child 0/i (the receive chain) of an account-level extended public key. */
function childPublicKey(xpub: HDKey, index: number): Uint8Array {
  const key = xpub.deriveChild(0).deriveChild(index).publicKey;
  if (!key) {
    throw new Error('the extended key has no public key');
  }
  return key;
}

/** base58check(0x41 ‖ 20 bytes): a TRON address as wallets show it (T…). */
export function tronAddressOf(hex21: Uint8Array): string {
  return base58check.encode(hex21);
}

/** The 21 bytes (0x41 ‖ 20) of a TRON address, or null when it is not a valid one. */
export function tronAddressBytes(address: string): Uint8Array | null {
  try {
    const bytes = base58check.decode(address);
    return bytes.length === 21 && bytes[0] === TRON_PREFIX ? bytes : null;
  } catch {
    return null;
  }
}

/** The TRC20 deposit address number `index`, from the extended public key of m/44'/195'/0'. */
export function tronDepositAddress(xpub: HDKey, index: number): string {
  const bytes = new Uint8Array(21);
  bytes[0] = TRON_PREFIX;
  bytes.set(accountBytes(childPublicKey(xpub, index)), 1);
  return tronAddressOf(bytes);
}

/** The ERC20 deposit address number `index`, EIP-55 checksummed, from the extended public key of m/44'/60'/0'. */
export function ethDepositAddress(xpub: HDKey, index: number): string {
  return eip55(bytesToHex(accountBytes(childPublicKey(xpub, index))));
}

/**
 * EIP-55: each letter of the lowercase hex address is upper-cased where the same nibble of keccak256 of
 * that text is 8 or more. Written here rather than imported from the chain client, which the API would
 * otherwise load whole (over 10 MB of its memory) for this one function; the worker's chain watcher uses it.
 */
function eip55(lowerHex40: string): string {
  const hash = bytesToHex(keccak_256(utf8ToBytes(lowerHex40)));
  let address = '0x';
  for (let i = 0; i < lowerHex40.length; i++) {
    address += parseInt(hash[i], 16) >= 8 ? lowerHex40[i].toUpperCase() : lowerHex40[i];
  }
  return address;
}

/** An extended public key (never a private one: the gateway holds none), or null when it is not valid. */
export function parseXpub(text: string): HDKey | null {
  try {
    const key = HDKey.fromExtendedKey(text);
    return key.privateKey ? null : key;
  } catch {
    return null;
  }
}

export { bytesToHex, hexToBytes };
