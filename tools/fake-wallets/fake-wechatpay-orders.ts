import { randomBytes } from 'node:crypto';
import { FakeOrder } from 'tools/fake-wallets/fake-wallet';
import {
  beijingTime,
  FakeWechatPayIdentity,
  newOpenId,
  newTransactionId,
} from 'tools/fake-wallets/fake-wechatpay-protocol';

/** An order as the wallet keeps it. */
export interface WechatPayOrder {
  outTradeNo: string;
  amountFen: number;
  notifyUrl: string;
  state: FakeOrder['state'];
  codeUrl: string;
  transactionId: string | null;
  successTime: string | null;
  openId: string | null;
}

/** An answer before it is signed: a status and a JSON body, or none (204). */
export interface Answer {
  status: number;
  body?: object;
}

type Json = Record<string, unknown> | null;

const OUT_TRADE_NO = /^[A-Za-z0-9_|*-]{6,32}$/;
/** time_expire as WeChat Pay takes it: RFC 3339 to the second, with an explicit offset. */
const TIME_EXPIRE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;
const STATE_WORDS = {
  WAIT: ['NOTPAY', '订单未支付'],
  PAID: ['SUCCESS', '支付成功'],
  CLOSED: ['CLOSED', '订单已关闭'],
} as const;

function error(status: number, code: string, message: string): Answer {
  return { status, body: { code, message } };
}

function isNativeOrder(body: Json): boolean {
  const amount = body?.amount as { total?: unknown; currency?: unknown } | undefined;
  return (
    typeof body?.out_trade_no === 'string' &&
    OUT_TRADE_NO.test(body.out_trade_no) &&
    typeof body.description === 'string' &&
    body.description !== '' &&
    typeof body.notify_url === 'string' &&
    /^https?:\/\//.test(body.notify_url) &&
    Number.isSafeInteger(amount?.total) &&
    (amount?.total as number) > 0 &&
    (amount?.currency === undefined || amount.currency === 'CNY') &&
    (body.time_expire === undefined || (typeof body.time_expire === 'string' && TIME_EXPIRE.test(body.time_expire)))
  );
}

/** The wallet's orders and what each APIv3 operation does to them. */
export class FakeWechatPayOrders {
  private readonly orders = new Map<string, WechatPayOrder>();

  constructor(private readonly identity: FakeWechatPayIdentity) {}

  get(outTradeNo: string): WechatPayOrder | undefined {
    return this.orders.get(outTradeNo);
  }

  /** POST /v3/pay/transactions/native: a waiting order with its code URL (the same one if asked again). */
  create(body: Json): Answer {
    if (body?.appid !== this.identity.appId || body?.mchid !== this.identity.mchId) {
      return error(400, 'APPID_MCHID_NOT_MATCH', 'appid和mch_id不匹配');
    }
    if (!isNativeOrder(body)) {
      return error(400, 'PARAM_ERROR', '参数错误');
    }
    const outTradeNo = body.out_trade_no as string;
    const existing = this.orders.get(outTradeNo);
    if (existing && existing.state !== 'WAIT') {
      return error(400, existing.state === 'PAID' ? 'ORDER_PAID' : 'ORDER_CLOSED', '订单状态不允许下单');
    }
    const order: WechatPayOrder = existing ?? {
      outTradeNo,
      amountFen: (body.amount as { total: number }).total,
      notifyUrl: body.notify_url as string,
      state: 'WAIT',
      codeUrl: `weixin://wxpay/bizpayurl?pr=${randomBytes(6).toString('base64url')}`,
      transactionId: null,
      successTime: null,
      openId: null,
    };
    this.orders.set(outTradeNo, order);
    return { status: 200, body: { code_url: order.codeUrl } };
  }

  /** GET /v3/pay/transactions/out-trade-no/{no}?mchid=: the transaction, as a notification carries it once paid. */
  query(outTradeNo: string, mchid: string | null): Answer {
    const order = this.orders.get(outTradeNo);
    if (!order || mchid !== this.identity.mchId) {
      return error(404, 'ORDER_NOT_EXIST', '订单不存在');
    }
    return { status: 200, body: this.transaction(order) };
  }

  /** POST /v3/pay/transactions/out-trade-no/{no}/close: a paid order cannot be closed. */
  close(outTradeNo: string, body: Json): Answer {
    if (body?.mchid !== this.identity.mchId) {
      return error(400, 'PARAM_ERROR', '参数错误');
    }
    const order = this.orders.get(outTradeNo);
    if (!order) {
      return error(404, 'ORDER_NOT_EXIST', '订单不存在');
    }
    if (order.state === 'PAID') {
      return error(400, 'ORDER_PAID', '订单已支付');
    }
    order.state = 'CLOSED';
    return { status: 204 };
  }

  /** The payer pays a waiting order; throws for any other. */
  pay(outTradeNo: string): WechatPayOrder {
    const order = this.orders.get(outTradeNo);
    if (order?.state !== 'WAIT') {
      throw new Error(`fake WeChat Pay: order ${outTradeNo} is ${order ? order.state : 'unknown'}, not waiting`);
    }
    Object.assign(order, {
      state: 'PAID',
      transactionId: newTransactionId(),
      successTime: beijingTime(),
      openId: newOpenId(),
    });
    return order;
  }

  /** The transaction resource of an order (APIv3 field names). */
  transaction(order: WechatPayOrder): object {
    const [tradeState, tradeStateDesc] = STATE_WORDS[order.state];
    const paid = order.state === 'PAID';
    return {
      appid: this.identity.appId,
      mchid: this.identity.mchId,
      out_trade_no: order.outTradeNo,
      trade_state: tradeState,
      trade_state_desc: tradeStateDesc,
      ...(paid && {
        transaction_id: order.transactionId,
        trade_type: 'NATIVE',
        bank_type: 'OTHERS',
        success_time: order.successTime,
        payer: { openid: order.openId },
      }),
      amount: paid
        ? { total: order.amountFen, payer_total: order.amountFen, currency: 'CNY', payer_currency: 'CNY' }
        : { total: order.amountFen, currency: 'CNY' },
    };
  }
}
