import { randomBytes, randomInt } from 'node:crypto';
import { beijingTime } from 'src/modules/payments/providers/alipay/alipay-protocol';
import { FakeOrder } from 'tools/fake-wallets/fake-wallet';

/** A response object of the fake gateway, before it is signed. */
export type AlipayContent = Record<string, string>;

export interface FakeTrade extends Omit<FakeOrder, 'queries'> {
  outTradeNo: string;
  subject: string;
  qrCode: string;
  createdAt: Date;
  /** Alipay closes an unpaid trade by itself at this time (timeout_express). */
  expiresAt: Date;
  paidAt: Date | null;
}

const AMOUNT = /^(?:0|[1-9]\d{0,8})(?:\.\d{1,2})?$/;
const TIMEOUT_EXPRESS = /^(\d+)([mhd])$/;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };
const DEFAULT_TIMEOUT_MS = 2 * 3_600_000;

const success = (fields: AlipayContent): AlipayContent => ({ code: '10000', msg: 'Success', ...fields });
export const businessError = (subCode: string, subMsg: string): AlipayContent => ({
  code: '40004',
  msg: 'Business Failed',
  sub_code: subCode,
  sub_msg: subMsg,
});
export const invalidArguments = (subCode: string, subMsg: string): AlipayContent => ({
  code: '40002',
  msg: 'Invalid Arguments',
  sub_code: subCode,
  sub_msg: subMsg,
});

const tradeNotExist = () => businessError('ACQ.TRADE_NOT_EXIST', 'trade does not exist');

/** Alipay's trade numbers: the Beijing date, then digits (28 in all). */
function newTradeNo(now: Date): string {
  const digits = Array.from({ length: 20 }, () => randomInt(10)).join('');
  return `${beijingTime(now).slice(0, 10).replace(/-/g, '')}${digits}`;
}

function timeoutMsOf(timeoutExpress: unknown): number | null {
  if (timeoutExpress === undefined) {
    return DEFAULT_TIMEOUT_MS;
  }
  const match = typeof timeoutExpress === 'string' ? TIMEOUT_EXPRESS.exec(timeoutExpress) : null;
  return match && Number(match[1]) > 0 ? Number(match[1]) * UNIT_MS[match[2]] : null;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The fake's trades by out_trade_no, and the three trade calls on them as Alipay answers them. */
export class FakeTradeBook {
  private readonly trades = new Map<string, FakeTrade>();

  /** The trade as it stands now: an unpaid trade past its timeout is closed, as Alipay closes it. */
  get(outTradeNo: string): FakeTrade | undefined {
    const trade = this.trades.get(outTradeNo);
    if (trade?.state === 'WAIT' && trade.expiresAt.getTime() <= Date.now()) {
      trade.state = 'CLOSED';
    }
    return trade;
  }

  precreate(biz: Record<string, unknown>, notifyUrl: string): AlipayContent {
    const [outTradeNo, amount, subject] = [text(biz.out_trade_no), text(biz.total_amount), text(biz.subject)];
    const timeoutMs = timeoutMsOf(biz.timeout_express);
    if (!outTradeNo || outTradeNo.length > 64 || !subject || !notifyUrl || timeoutMs === null) {
      return invalidArguments('ACQ.INVALID_PARAMETER', 'missing or invalid parameter');
    }
    if (!AMOUNT.test(amount) || Number(amount) < 0.01) {
      return invalidArguments('ACQ.INVALID_PARAMETER', 'invalid total_amount');
    }
    const existing = this.get(outTradeNo);
    if (existing) {
      return this.precreateAgain(existing, amount);
    }
    const now = new Date();
    const trade: FakeTrade = {
      outTradeNo,
      amount,
      subject,
      notifyUrl,
      state: 'WAIT',
      tradeNo: null,
      qrCode: `https://qr.alipay.com/bax${randomBytes(12).toString('hex')}`,
      createdAt: now,
      expiresAt: new Date(now.getTime() + timeoutMs),
      paidAt: null,
    };
    this.trades.set(outTradeNo, trade);
    return success({ out_trade_no: outTradeNo, qr_code: trade.qrCode });
  }

  /** The same order asked again gets its QR code again; a changed or finished one is refused. */
  private precreateAgain(trade: FakeTrade, amount: string): AlipayContent {
    if (trade.state === 'PAID') {
      return businessError('ACQ.TRADE_HAS_SUCCESS', 'trade has been paid');
    }
    if (trade.state === 'CLOSED') {
      return businessError('ACQ.TRADE_HAS_CLOSE', 'trade has been closed');
    }
    if (trade.amount !== amount) {
      return businessError('ACQ.CONTEXT_INCONSISTENT', 'trade information is inconsistent');
    }
    return success({ out_trade_no: trade.outTradeNo, qr_code: trade.qrCode });
  }

  query(biz: Record<string, unknown>): AlipayContent {
    const trade = this.get(text(biz.out_trade_no));
    if (!trade) {
      return tradeNotExist();
    }
    const common = { out_trade_no: trade.outTradeNo, total_amount: trade.amount };
    switch (trade.state) {
      case 'WAIT':
        return success({ ...common, trade_status: 'WAIT_BUYER_PAY' });
      case 'CLOSED':
        return success({ ...common, trade_status: 'TRADE_CLOSED' });
      case 'PAID':
        return success({
          ...common,
          trade_no: trade.tradeNo!,
          trade_status: 'TRADE_SUCCESS',
          buyer_logon_id: 'pay***@example.com',
          buyer_pay_amount: trade.amount,
          receipt_amount: trade.amount,
          send_pay_date: beijingTime(trade.paidAt!),
        });
    }
  }

  close(biz: Record<string, unknown>): AlipayContent {
    const trade = this.get(text(biz.out_trade_no));
    if (!trade) {
      return tradeNotExist();
    }
    if (trade.state === 'PAID') {
      return businessError('ACQ.TRADE_STATUS_ERROR', 'trade status is not valid for closing');
    }
    trade.state = 'CLOSED';
    return success({ out_trade_no: trade.outTradeNo });
  }

  /** The payer pays a waiting trade; anything else is a mistake of the test that asks. */
  pay(outTradeNo: string): FakeTrade {
    const trade = this.get(outTradeNo);
    if (trade?.state !== 'WAIT') {
      throw new Error(`fake Alipay: no waiting trade ${outTradeNo} to pay (${trade?.state ?? 'unknown'})`);
    }
    trade.state = 'PAID';
    trade.paidAt = new Date();
    trade.tradeNo = newTradeNo(trade.paidAt);
    return trade;
  }
}
