import {
  createCipheriv,
  createSign,
  createVerify,
  generateKeyPair,
  KeyObject,
  randomBytes,
  randomInt,
  randomUUID,
} from 'node:crypto';
import { promisify } from 'node:util';

/**
 * The wallet's side of APIv3, written from WeChat Pay's documentation and independently of the
 * provider's own helpers, so that a mistake in one shows up as a refusal in the other.
 */

const generateRsaKeyPair = promisify(generateKeyPair);
const AUTHORIZATION_PATTERN = /^WECHATPAY2-SHA256-RSA2048 (.+)$/;
const MAX_SKEW_SECONDS = 5 * 60;

export interface RsaKeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
}

/** Everything the fake generates at start: the merchant's credentials and the platform's. */
export interface FakeWechatPayIdentity {
  mchId: string;
  appId: string;
  /** 32 printable characters, as the merchant sets it in the merchant platform. */
  apiV3Key: string;
  merchant: RsaKeyPair;
  certSerial: string;
  platform: RsaKeyPair;
  platformKeyId: string;
  /** Signs what must not verify: forged notifications and answers with a bad signature. */
  stranger: RsaKeyPair;
}

function digits(count: number): string {
  return Array.from({ length: count }, () => randomInt(10)).join('');
}

export async function newIdentity(): Promise<FakeWechatPayIdentity> {
  const [merchant, platform, stranger] = await Promise.all(
    [0, 1, 2].map(() => generateRsaKeyPair('rsa', { modulusLength: 2048 })),
  );
  return {
    mchId: `19${digits(8)}`,
    appId: `wx${randomBytes(8).toString('hex')}`,
    apiV3Key: randomBytes(24).toString('base64url'),
    merchant,
    certSerial: randomBytes(20).toString('hex').toUpperCase(),
    platform,
    platformKeyId: `PUB_KEY_ID_01${digits(26)}`,
    stranger,
  };
}

/** The env the gateway needs to talk to this fake. */
export function identityEnv(identity: FakeWechatPayIdentity, url: string): Record<string, string> {
  return {
    WECHATPAY_MCH_ID: identity.mchId,
    WECHATPAY_APP_ID: identity.appId,
    WECHATPAY_API_V3_KEY: identity.apiV3Key,
    WECHATPAY_PRIVATE_KEY: identity.merchant.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    WECHATPAY_CERT_SERIAL: identity.certSerial,
    WECHATPAY_PLATFORM_PUBLIC_KEY: identity.platform.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    WECHATPAY_PLATFORM_PUBLIC_KEY_ID: identity.platformKeyId,
    WECHATPAY_BASE_URL: url,
  };
}

function lines(parts: string[]): string {
  return parts.map((part) => `${part}\n`).join('');
}

/**
 * Whether a request's Authorization header is the merchant's: its mchid and certificate serial, a
 * recent timestamp, and an RSA-SHA256 signature over method, path with query, timestamp, nonce and body.
 */
export function isSignedByMerchant(
  identity: FakeWechatPayIdentity,
  request: { method: string; pathWithQuery: string; body: string; authorization: string | undefined },
): boolean {
  const match = AUTHORIZATION_PATTERN.exec(request.authorization ?? '');
  if (!match) {
    return false;
  }
  const fields = new Map([...match[1].matchAll(/(\w+)="([^"]*)"/g)].map(([, name, value]) => [name, value]));
  const [mchid, nonce, signature, timestamp, serial] = [
    'mchid',
    'nonce_str',
    'signature',
    'timestamp',
    'serial_no',
  ].map((name) => fields.get(name) ?? '');
  if (mchid !== identity.mchId || serial !== identity.certSerial || !nonce || !signature) {
    return false;
  }
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) {
    return false;
  }
  const message = lines([request.method, request.pathWithQuery, timestamp, nonce, request.body]);
  return createVerify('RSA-SHA256').update(message).verify(identity.merchant.publicKey, signature, 'base64');
}

/** The Wechatpay-* headers that sign an answer or a notification, with `key` and the platform key's id. */
export function platformSignature(
  identity: FakeWechatPayIdentity,
  body: string,
  options: { key?: KeyObject; skewSeconds?: number } = {},
): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000) + (options.skewSeconds ?? 0));
  const nonce = randomBytes(16).toString('hex');
  const signature = createSign('RSA-SHA256')
    .update(lines([timestamp, nonce, body]))
    .sign(options.key ?? identity.platform.privateKey, 'base64');
  return {
    'Wechatpay-Timestamp': timestamp,
    'Wechatpay-Nonce': nonce,
    'Wechatpay-Signature': signature,
    'Wechatpay-Serial': identity.platformKeyId,
    'Wechatpay-Signature-Type': 'WECHATPAY2-SHA256-RSA2048',
  };
}

/** A notification's `resource`: `plain` sealed with AES-256-GCM under the APIv3 key, the tag appended. */
export function sealResource(identity: FakeWechatPayIdentity, plain: object): Record<string, string> {
  const nonce = randomBytes(6).toString('hex');
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(identity.apiV3Key, 'utf8'), Buffer.from(nonce, 'utf8'));
  cipher.setAAD(Buffer.from('transaction', 'utf8'));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(plain), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return {
    original_type: 'transaction',
    algorithm: 'AEAD_AES_256_GCM',
    ciphertext: sealed.toString('base64'),
    associated_data: 'transaction',
    nonce,
  };
}

/** RFC 3339 in Beijing time, as WeChat Pay writes its times. */
export function beijingTime(date = new Date()): string {
  return `${new Date(date.getTime() + 8 * 3_600_000).toISOString().slice(0, 19)}+08:00`;
}

export function newTransactionId(): string {
  return `4200${digits(24)}`;
}

export function newOpenId(): string {
  return `o${randomBytes(20).toString('base64url').slice(0, 27)}`;
}

export function newEventId(): string {
  return randomUUID();
}
