import { PaymentEvidence } from 'src/modules/payments/providers/payment-provider';
import { fenToAmount } from 'src/modules/payments/providers/wechatpay/wechatpay-format';

/** The fields of an APIv3 transaction (query answer or decrypted notification) that we read. */
export interface WechatPayTransaction {
  mchid: string;
  appid: string;
  out_trade_no: string;
  trade_state: string;
  transaction_id?: string;
  amount?: { total?: number };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The transaction in `value`, or null when a field we rely on is missing or of the wrong type. */
export function transactionOf(value: unknown): WechatPayTransaction | null {
  if (!isRecord(value)) {
    return null;
  }
  const { mchid, appid, out_trade_no, trade_state, transaction_id, amount } = value;
  const strings = [mchid, appid, out_trade_no, trade_state].every((field) => typeof field === 'string');
  const total = isRecord(amount) ? amount.total : undefined;
  if (!strings || (transaction_id !== undefined && typeof transaction_id !== 'string')) {
    return null;
  }
  if (total !== undefined && !(Number.isSafeInteger(total) && (total as number) >= 0)) {
    return null;
  }
  return value as unknown as WechatPayTransaction;
}

/** What a paid transaction proves, or null when it lacks the trade number or the amount. */
export function evidenceOf(transaction: WechatPayTransaction): PaymentEvidence | null {
  const total = transaction.amount?.total;
  if (!transaction.transaction_id || total === undefined) {
    return null;
  }
  return {
    provider: 'wechatpay',
    tradeNo: transaction.transaction_id,
    amount: fenToAmount(total),
    rawStatus: transaction.trade_state,
  };
}
