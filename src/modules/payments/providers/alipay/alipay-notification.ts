import { KeyObject } from 'node:crypto';
import { isPaidStatus } from 'src/modules/payments/providers/alipay/alipay-protocol';
import { alipaySigningString, verifyRsa2 } from 'src/modules/payments/providers/alipay/alipay-signature';
import { NotificationRejected, VerifiedNotification } from 'src/modules/payments/providers/payment-provider';

/** A notification is a few hundred bytes of form; anything this large is not one and is not parsed. */
export const MAX_NOTIFICATION_BYTES = 64 * 1024;

const REQUIRED_FIELDS = ['app_id', 'out_trade_no', 'trade_no', 'trade_status', 'total_amount', 'sign', 'sign_type'];

/** The form's fields, decoded; null when it is not a UTF-8 form with each field once. */
function parseForm(body: Buffer): Record<string, string> | null {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return null;
  }
  // No prototype: a field named __proto__ is a field like any other.
  const fields = Object.create(null) as Record<string, string>;
  for (const [key, value] of new URLSearchParams(text)) {
    // A repeated field would leave which value was signed, and which one we read, ambiguous.
    if (Object.hasOwn(fields, key)) {
      return null;
    }
    fields[key] = value;
  }
  return fields;
}

/**
 * Checks Alipay's RSA2 signature on an asynchronous notification (form-encoded) and that it names our
 * app. The signature covers every non-empty field but `sign` and `sign_type`, decoded and sorted.
 * Whether the order and amount are ours is the caller's to check.
 */
export function verifyAlipayNotification(
  body: Buffer,
  ours: { appId: string; alipayPublicKey: KeyObject },
): VerifiedNotification {
  if (body.length > MAX_NOTIFICATION_BYTES) {
    throw new NotificationRejected('malformed', 'the notification is too large');
  }
  const fields = parseForm(body);
  if (!fields) {
    throw new NotificationRejected('malformed', 'the notification is not a UTF-8 form');
  }
  const missing = REQUIRED_FIELDS.find((name) => !fields[name]);
  if (missing) {
    throw new NotificationRejected('malformed', `the notification has no ${missing}`);
  }
  if (fields.sign_type !== 'RSA2') {
    throw new NotificationRejected('bad_signature', 'the notification is not signed with RSA2');
  }
  const content = alipaySigningString(fields, ['sign', 'sign_type']);
  if (!verifyRsa2(content, fields.sign, ours.alipayPublicKey)) {
    throw new NotificationRejected('bad_signature', "the notification's signature does not verify");
  }
  if (fields.app_id !== ours.appId) {
    throw new NotificationRejected('wrong_app', 'the notification names another app');
  }
  return {
    orderNo: fields.out_trade_no,
    paid: isPaidStatus(fields.trade_status),
    evidence: {
      provider: 'alipay',
      tradeNo: fields.trade_no,
      amount: fields.total_amount,
      rawStatus: fields.trade_status,
    },
  };
}
