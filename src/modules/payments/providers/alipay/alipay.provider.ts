import { AlipayConfig } from 'src/config/payments-config';
import {
  AlipayGateway,
  hasSubCode,
  isSuccess,
  requireString,
  requireSuccess,
  unavailable,
} from 'src/modules/payments/providers/alipay/alipay-gateway';
import { verifyAlipayNotification } from 'src/modules/payments/providers/alipay/alipay-notification';
import { isPaidStatus } from 'src/modules/payments/providers/alipay/alipay-protocol';
import {
  PaymentInstructions,
  PaymentOrder,
  PaymentProvider,
  PaymentState,
  RawNotification,
  VerifiedNotification,
  WebhookReply,
} from 'src/modules/payments/providers/payment-provider';

/** Alipay's answer for an out_trade_no it has no trade of: for a precreated order, not scanned yet. */
const TRADE_NOT_EXIST = 'ACQ.TRADE_NOT_EXIST';

/**
 * Whole minutes until `expiresAt`, rounded down (at least the 1 minute Alipay accepts): Alipay stops
 * taking payment no later than the order expires, so the last query at expiry finds the trade closed
 * (or never scanned) rather than one a payer may still pay after we stopped asking.
 */
function minutesUntil(expiresAt: Date, now: Date): number {
  return Math.max(1, Math.floor((expiresAt.getTime() - now.getTime()) / 60_000));
}

/** Alipay's face-to-face payment: the payer scans a QR code that `alipay.trade.precreate` issues. */
export class AlipayProvider implements PaymentProvider {
  readonly method = 'alipay';
  private readonly gateway: AlipayGateway;

  /** `limits.timeoutMs` bounds each call (callProvider's default otherwise). */
  constructor(
    private readonly config: AlipayConfig,
    private readonly notifyUrl: string,
    limits: { timeoutMs?: number } = {},
  ) {
    this.gateway = new AlipayGateway(config, limits);
  }

  async createPayment(order: PaymentOrder): Promise<PaymentInstructions> {
    const method = 'alipay.trade.precreate';
    const bizContent = {
      out_trade_no: order.orderNo,
      total_amount: order.amount,
      subject: order.subject,
      timeout_express: `${minutesUntil(order.expiresAt, new Date())}m`,
    };
    const response = await this.gateway.call(method, bizContent, { notify_url: this.notifyUrl });
    requireSuccess(method, response);
    return { qrCode: requireString(method, response, 'qr_code') };
  }

  async query(order: PaymentOrder): Promise<PaymentState> {
    const method = 'alipay.trade.query';
    const response = await this.gateway.call(method, { out_trade_no: order.orderNo });
    if (!isSuccess(response) && hasSubCode(response, TRADE_NOT_EXIST)) {
      return { state: 'unpaid', rawStatus: 'TRADE_NOT_EXIST' };
    }
    requireSuccess(method, response);
    const rawStatus = requireString(method, response, 'trade_status');
    if (!isPaidStatus(rawStatus)) {
      return { state: 'unpaid', rawStatus };
    }
    // A signed answer about another trade must not pay this order.
    if (response.out_trade_no !== order.orderNo) {
      throw unavailable(method, 'the answer is about another out_trade_no');
    }
    const tradeNo = requireString(method, response, 'trade_no');
    const amount = requireString(method, response, 'total_amount');
    return { state: 'paid', evidence: { provider: 'alipay', tradeNo, amount, rawStatus } };
  }

  /** A paid trade cannot be closed (ACQ.TRADE_STATUS_ERROR): that throws, and a query tells the rest. */
  async close(order: PaymentOrder): Promise<void> {
    const method = 'alipay.trade.close';
    const response = await this.gateway.call(method, { out_trade_no: order.orderNo });
    if (!isSuccess(response) && hasSubCode(response, TRADE_NOT_EXIST)) {
      return;
    }
    requireSuccess(method, response);
  }

  verifyNotification(raw: RawNotification): VerifiedNotification {
    return verifyAlipayNotification(raw.body, this.config);
  }

  /** Alipay reads only the text: anything but `success` makes it notify again later. */
  reply(outcome: 'committed' | 'retry' | 'rejected'): WebhookReply {
    return { status: 200, contentType: 'text/plain', body: outcome === 'committed' ? 'success' : 'fail' };
  }
}
