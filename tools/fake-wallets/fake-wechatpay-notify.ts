import { request } from 'undici';
import { amountToFen, fenToAmount } from 'src/modules/payments/providers/wechatpay/wechatpay-format';
import { NotifyOptions, NotifyResult } from 'tools/fake-wallets/fake-wallet';
import { WechatPayOrder } from 'tools/fake-wallets/fake-wechatpay-orders';
import {
  beijingTime,
  FakeWechatPayIdentity,
  newEventId,
  platformSignature,
  sealResource,
} from 'tools/fake-wallets/fake-wechatpay-protocol';

/** WeChat Pay waits 5 s for an acknowledgement; a little more here, so a slow webhook shows as slow, not as lost. */
const NOTIFY_TIMEOUT_MS = 10_000;

/** The notification document of a transaction: its resource sealed with the APIv3 key. */
function notificationBody(identity: FakeWechatPayIdentity, eventId: string, transaction: object): string {
  return JSON.stringify({
    id: eventId,
    create_time: beijingTime(),
    resource_type: 'encrypt-resource',
    event_type: 'TRANSACTION.SUCCESS',
    summary: '支付成功',
    resource: sealResource(identity, transaction),
  });
}

/** What the notification claims: the paid transaction, with the amount or merchant `options` asks for. */
function claimedTransaction(identity: FakeWechatPayIdentity, order: WechatPayOrder, options: NotifyOptions): object {
  const total = options.amount === undefined ? order.amountFen : Number(amountToFen(options.amount));
  return {
    mchid: options.appId ?? identity.mchId,
    appid: identity.appId,
    out_trade_no: order.outTradeNo,
    transaction_id: order.transactionId,
    trade_type: 'NATIVE',
    trade_state: 'SUCCESS',
    trade_state_desc: '支付成功',
    bank_type: 'OTHERS',
    success_time: order.successTime,
    payer: { openid: order.openId },
    amount: { total, payer_total: total, currency: 'CNY', payer_currency: 'CNY' },
  };
}

async function post(url: string, headers: Record<string, string>, body: string): Promise<NotifyResult> {
  const answer = await request(url, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json', 'User-Agent': 'Mozilla/4.0' },
    body,
    headersTimeout: NOTIFY_TIMEOUT_MS,
    bodyTimeout: NOTIFY_TIMEOUT_MS,
  });
  return { status: answer.statusCode, body: await answer.body.text() };
}

/**
 * Sends a paid order's notification to its notify_url as `options` asks (forged, altered, duplicated,
 * skewed, claiming another amount or merchant) and resolves with the webhook's answers.
 */
export async function sendNotification(
  identity: FakeWechatPayIdentity,
  order: WechatPayOrder,
  options: NotifyOptions,
): Promise<NotifyResult[]> {
  const mode = options.mode ?? 'send';
  if (mode === 'drop') {
    return [];
  }
  const eventId = newEventId();
  const transaction = claimedTransaction(identity, order, options);
  const signedBody = notificationBody(identity, eventId, transaction);
  const headers = platformSignature(identity, signedBody, {
    key: mode === 'forge' ? identity.stranger.privateKey : identity.platform.privateKey,
    skewSeconds: options.timestampSkewSeconds,
  });
  // An altered notification keeps the genuine signature over a body that now claims one yuan more.
  const body =
    mode === 'alter'
      ? notificationBody(
          identity,
          eventId,
          claimedTransaction(identity, order, { ...options, amount: oneYuanMore(transaction) }),
        )
      : signedBody;
  return Promise.all(Array.from({ length: options.copies ?? 1 }, () => post(order.notifyUrl, headers, body)));
}

function oneYuanMore(transaction: object): string {
  return fenToAmount((transaction as { amount: { total: number } }).amount.total + 100);
}
