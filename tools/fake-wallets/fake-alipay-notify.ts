import { KeyObject, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beijingTime } from 'src/modules/payments/providers/alipay/alipay-protocol';
import { alipaySigningString, signRsa2 } from 'src/modules/payments/providers/alipay/alipay-signature';
import { FakeTrade } from 'tools/fake-wallets/fake-alipay-trades';
import { NotifyOptions, NotifyResult } from 'tools/fake-wallets/fake-wallet';
import { request } from 'undici';

const NOTIFY_TIMEOUT_MS = 30_000;

export interface NotifySigner {
  appId: string;
  /** Alipay's own key: genuine notifications. */
  alipayKey: KeyObject;
  /** A key that is not Alipay's: forged ones. */
  strangerKey: KeyObject;
}

/** Adds 100.00 to an amount, in fen so no float rounds it. */
function raised(amount: string): string {
  const [yuan, fen = ''] = amount.split('.');
  const total = BigInt(yuan) * 100n + BigInt(fen.padEnd(2, '0')) + 10_000n;
  return `${total / 100n}.${String(total % 100n).padStart(2, '0')}`;
}

/** The fields of Alipay's trade_status_sync notification of a paid trade, signed as `options` asks. */
function notificationOf(trade: FakeTrade, signer: NotifySigner, options: NotifyOptions): Record<string, string> {
  const amount = options.amount ?? trade.amount;
  const fields: Record<string, string> = {
    notify_time: beijingTime(new Date()),
    notify_type: 'trade_status_sync',
    notify_id: randomBytes(16).toString('hex'),
    app_id: options.appId ?? signer.appId,
    charset: 'utf-8',
    version: '1.0',
    sign_type: 'RSA2',
    trade_no: trade.tradeNo!,
    out_trade_no: trade.outTradeNo,
    trade_status: 'TRADE_SUCCESS',
    total_amount: amount,
    receipt_amount: amount,
    buyer_pay_amount: amount,
    gmt_create: beijingTime(trade.createdAt),
    gmt_payment: beijingTime(trade.paidAt!),
    subject: trade.subject,
  };
  const key = options.mode === 'forge' ? signer.strangerKey : signer.alipayKey;
  fields.sign = signRsa2(alipaySigningString(fields, ['sign', 'sign_type']), key);
  if (options.mode === 'alter') {
    fields.total_amount = raised(fields.total_amount);
  }
  return fields;
}

async function post(url: string, body: string): Promise<NotifyResult> {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
    headersTimeout: NOTIFY_TIMEOUT_MS,
    bodyTimeout: NOTIFY_TIMEOUT_MS,
  });
  return { status: response.statusCode, body: await response.body.text() };
}

/**
 * Posts the notification of a paid trade to its notify_url, `copies` identical copies at once (one
 * notify_id, as a resend that crosses our answer), and resolves with each answer.
 */
export async function notifyPaid(
  trade: FakeTrade,
  signer: NotifySigner,
  options: NotifyOptions,
): Promise<NotifyResult[]> {
  if (options.mode === 'drop') {
    return [];
  }
  if (options.delayMs) {
    await sleep(options.delayMs);
  }
  const body = new URLSearchParams(notificationOf(trade, signer, options)).toString();
  return Promise.all(Array.from({ length: options.copies ?? 1 }, () => post(trade.notifyUrl, body)));
}
