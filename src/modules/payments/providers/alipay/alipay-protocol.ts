/** The words of Alipay's OpenAPI that our provider and the fake wallet both speak. */

export type AlipayMethod = 'alipay.trade.precreate' | 'alipay.trade.query' | 'alipay.trade.close';

export const ALIPAY_FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded;charset=utf-8';

/** The answer code of a call that did what it was asked. */
export const ALIPAY_SUCCESS_CODE = '10000';

/** The trade statuses that mean the payer paid: FINISHED is SUCCESS once refunds are no longer possible. */
const PAID_STATUSES: ReadonlySet<string> = new Set(['TRADE_SUCCESS', 'TRADE_FINISHED']);

export function isPaidStatus(tradeStatus: string): boolean {
  return PAID_STATUSES.has(tradeStatus);
}

/** The member of an answer that holds the response: `alipay.trade.query` → `alipay_trade_query_response`. */
export function responseKeyOf(method: string): string {
  return `${method.replace(/\./g, '_')}_response`;
}

const BEIJING_OFFSET_MS = 8 * 60 * 60 * 1000;

/** `yyyy-MM-dd HH:mm:ss` in Beijing time (UTC+8, no daylight saving), as Alipay writes every time. */
export function beijingTime(date: Date): string {
  return new Date(date.getTime() + BEIJING_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

/** The instant an Alipay time names, or null when it is not one. */
export function parseBeijingTime(text: string): Date | null {
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/.exec(text);
  const date = match ? new Date(`${match[1]}T${match[2]}+08:00`) : null;
  return date && !Number.isNaN(date.getTime()) ? date : null;
}
