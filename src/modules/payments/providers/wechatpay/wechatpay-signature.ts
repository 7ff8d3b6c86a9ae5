import { createSign, createVerify, KeyObject, randomBytes } from 'node:crypto';

/** The scheme both sides of APIv3 sign with: RSA-SHA256, PKCS#1 v1.5, base64. */
export const AUTHORIZATION_SCHEME = 'WECHATPAY2-SHA256-RSA2048';

/**
 * What APIv3 signs: each part followed by a newline. A part may be raw bytes, because a notification's
 * signature covers its body exactly as it arrived.
 */
export function signatureMessage(parts: (string | Buffer)[]): Buffer {
  return Buffer.concat(parts.flatMap((part) => [Buffer.from(part), Buffer.from('\n')]));
}

export function signMessage(message: Buffer, privateKey: KeyObject): string {
  return createSign('RSA-SHA256').update(message).sign(privateKey, 'base64');
}

/** False for a signature that does not verify, and for one that is not even base64 of the right size. */
export function verifyMessage(message: Buffer, signature: string, publicKey: KeyObject): boolean {
  try {
    return createVerify('RSA-SHA256').update(message).verify(publicKey, signature, 'base64');
  } catch {
    return false;
  }
}

export interface MerchantSigner {
  mchId: string;
  certSerial: string;
  privateKey: KeyObject;
}

export interface SignedRequest {
  method: 'GET' | 'POST';
  /** The URL's path and query exactly as sent, e.g. /v3/pay/transactions/out-trade-no/abc?mchid=1900000001. */
  pathWithQuery: string;
  /** '' for a GET. */
  body: string;
  /** Seconds since the epoch; now by default. */
  timestamp?: number;
  nonce?: string;
}

/** A fresh nonce: 32 characters of [0-9A-F]. */
export function newNonce(): string {
  return randomBytes(16).toString('hex').toUpperCase();
}

/** The Authorization header of one APIv3 request, signed with the merchant's key. */
export function authorizationHeader(signer: MerchantSigner, request: SignedRequest): string {
  const timestamp = String(request.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = request.nonce ?? newNonce();
  const message = signatureMessage([request.method, request.pathWithQuery, timestamp, nonce, request.body]);
  const signature = signMessage(message, signer.privateKey);
  const fields = { mchid: signer.mchId, nonce_str: nonce, signature, timestamp, serial_no: signer.certSerial };
  return `${AUTHORIZATION_SCHEME} ${Object.entries(fields)
    .map(([name, value]) => `${name}="${value}"`)
    .join(',')}`;
}
