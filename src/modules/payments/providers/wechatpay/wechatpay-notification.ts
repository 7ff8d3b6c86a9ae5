import { WechatPayConfig } from 'src/config/payments-config';
import {
  NotificationRejected,
  RawNotification,
  VerifiedNotification,
} from 'src/modules/payments/providers/payment-provider';
import { SignatureHeaders, signatureHeadersOf } from 'src/modules/payments/providers/wechatpay/wechatpay-headers';
import { decryptResource, EncryptedResource } from 'src/modules/payments/providers/wechatpay/wechatpay-resource';
import { signatureMessage, verifyMessage } from 'src/modules/payments/providers/wechatpay/wechatpay-signature';
import { evidenceOf, transactionOf } from 'src/modules/payments/providers/wechatpay/wechatpay-transaction';

/** A notification is a small JSON document; anything larger is refused unread. */
export const MAX_NOTIFICATION_BYTES = 64 * 1024;
/** WeChat Pay's own advice: a signature timestamp further than this from now may be a replay. */
export const MAX_TIMESTAMP_SKEW_SECONDS = 5 * 60;

function signatureHeadersOfNotification(raw: RawNotification): SignatureHeaders {
  const headers = signatureHeadersOf(raw.headers);
  if (!headers) {
    throw new NotificationRejected('malformed', 'a Wechatpay-* signature header is missing');
  }
  return headers;
}

function resourceOf(body: Buffer): EncryptedResource {
  let notification: unknown;
  try {
    notification = JSON.parse(body.toString('utf8'));
  } catch {
    throw new NotificationRejected('malformed', 'the body is not JSON');
  }
  const resource = (notification as { resource?: Partial<EncryptedResource> } | null)?.resource;
  const fields = [resource?.algorithm, resource?.ciphertext, resource?.nonce];
  const associated = resource?.associated_data;
  if (!fields.every((field) => typeof field === 'string') || !['string', 'undefined'].includes(typeof associated)) {
    throw new NotificationRejected('malformed', 'the body has no encrypted resource');
  }
  return resource as EncryptedResource;
}

function checkSignature(config: WechatPayConfig, headers: SignatureHeaders, body: Buffer, nowMs: number): void {
  if (headers.serial !== config.platformPublicKeyId) {
    throw new NotificationRejected('unknown_key', 'signed with a key that is not the platform key we know');
  }
  const timestamp = /^\d{1,12}$/.test(headers.timestamp) ? Number(headers.timestamp) : NaN;
  if (!(Math.abs(nowMs / 1000 - timestamp) <= MAX_TIMESTAMP_SKEW_SECONDS)) {
    throw new NotificationRejected('stale_timestamp', 'the signature timestamp is too far from now');
  }
  const message = signatureMessage([headers.timestamp, headers.nonce, body]);
  if (!verifyMessage(message, headers.signature, config.platformPublicKey)) {
    throw new NotificationRejected('bad_signature', 'the signature does not verify');
  }
}

function openResource(config: WechatPayConfig, resource: EncryptedResource): unknown {
  let plain: string;
  try {
    plain = decryptResource(config.apiV3Key, resource);
  } catch {
    throw new NotificationRejected('decrypt_failed', 'the resource does not open with our APIv3 key');
  }
  try {
    return JSON.parse(plain);
  } catch {
    throw new NotificationRejected('malformed', 'the resource is not JSON');
  }
}

/**
 * Believes a notification only once its signature, over the body exactly as it arrived, checks out
 * with the platform key; only then is the resource decrypted. Whether the order and the amount match
 * is the caller's business.
 */
export function verifyWechatPayNotification(
  config: WechatPayConfig,
  raw: RawNotification,
  nowMs: number = Date.now(),
): VerifiedNotification {
  if (raw.body.length > MAX_NOTIFICATION_BYTES) {
    throw new NotificationRejected('malformed', `the body is larger than ${MAX_NOTIFICATION_BYTES} bytes`);
  }
  const headers = signatureHeadersOfNotification(raw);
  const resource = resourceOf(raw.body);
  checkSignature(config, headers, raw.body, nowMs);
  const transaction = transactionOf(openResource(config, resource));
  if (!transaction) {
    throw new NotificationRejected('malformed', 'the transaction lacks a field');
  }
  if (transaction.mchid !== config.mchId || transaction.appid !== config.appId) {
    throw new NotificationRejected('wrong_app', 'the transaction is not of our merchant and app');
  }
  const evidence = evidenceOf(transaction);
  if (!evidence) {
    throw new NotificationRejected('malformed', 'the transaction has no trade number or amount');
  }
  return { orderNo: transaction.out_trade_no, paid: transaction.trade_state === 'SUCCESS', evidence };
}
