import { WechatPayConfig } from 'src/config/payments-config';
import {
  PaymentInstructions,
  PaymentOrder,
  PaymentProvider,
  PaymentState,
  RawNotification,
  VerifiedNotification,
  WebhookReply,
} from 'src/modules/payments/providers/payment-provider';
import {
  errorCodeOf,
  unavailable,
  VerifiedAnswer,
  WechatPayClient,
  WechatPayClientOptions,
  WechatPayOperation,
} from 'src/modules/payments/providers/wechatpay/wechatpay-client';
import { fenForWire, toBeijingTime } from 'src/modules/payments/providers/wechatpay/wechatpay-format';
import { verifyWechatPayNotification } from 'src/modules/payments/providers/wechatpay/wechatpay-notification';
import { evidenceOf, transactionOf } from 'src/modules/payments/providers/wechatpay/wechatpay-transaction';

const REPLIES = {
  retry: { status: 500, message: 'the notification could not be recorded now; send it again' },
  rejected: { status: 400, message: 'the notification was refused' },
};

/** WeChat Pay Native pay (APIv3): the payer scans a code URL; the wallet notifies, and we can ask. */
export class WechatPayProvider implements PaymentProvider {
  readonly method = 'wechatpay';
  private readonly client: WechatPayClient;

  constructor(
    private readonly config: WechatPayConfig,
    private readonly notifyUrl: string,
    options: WechatPayClientOptions = {},
  ) {
    this.client = new WechatPayClient(config, options);
  }

  async createPayment(order: PaymentOrder): Promise<PaymentInstructions> {
    const answer = await this.client.call('create', 'POST', '/v3/pay/transactions/native', {
      appid: this.config.appId,
      mchid: this.config.mchId,
      description: order.subject,
      out_trade_no: order.orderNo,
      time_expire: toBeijingTime(order.expiresAt),
      notify_url: this.notifyUrl,
      amount: { total: fenForWire(order.amountFen), currency: 'CNY' },
    });
    expectStatus('create', answer, 200);
    const codeUrl = (answer.body as { code_url?: unknown } | null)?.code_url;
    if (typeof codeUrl !== 'string' || codeUrl === '') {
      throw unavailable('create', 'the answer has no code_url');
    }
    return { codeUrl };
  }

  async query(order: PaymentOrder): Promise<PaymentState> {
    const path = `${this.orderPath(order)}?mchid=${encodeURIComponent(this.config.mchId)}`;
    const answer = await this.client.call('query', 'GET', path);
    if (answer.status === 404 && errorCodeOf(answer.body) === 'ORDER_NOT_EXIST') {
      return { state: 'unpaid', rawStatus: 'ORDER_NOT_EXIST' };
    }
    expectStatus('query', answer, 200);
    const transaction = transactionOf(answer.body);
    if (!transaction) {
      throw unavailable('query', 'the answer is not a transaction');
    }
    const ours = [transaction.mchid === this.config.mchId, transaction.appid === this.config.appId];
    if (!ours.every(Boolean) || transaction.out_trade_no !== order.orderNo) {
      throw unavailable('query', 'the answer is of another merchant, app or order');
    }
    if (transaction.trade_state !== 'SUCCESS') {
      return { state: 'unpaid', rawStatus: transaction.trade_state };
    }
    const evidence = evidenceOf(transaction);
    if (!evidence) {
      throw unavailable('query', 'a paid transaction without its trade number or amount');
    }
    return { state: 'paid', evidence };
  }

  async close(order: PaymentOrder): Promise<void> {
    const answer = await this.client.call('close', 'POST', `${this.orderPath(order)}/close`, {
      mchid: this.config.mchId,
    });
    expectStatus('close', answer, 204);
  }

  verifyNotification(raw: RawNotification): VerifiedNotification {
    return verifyWechatPayNotification(this.config, raw);
  }

  reply(outcome: 'committed' | 'retry' | 'rejected'): WebhookReply {
    if (outcome === 'committed') {
      return { status: 204 };
    }
    const { status, message } = REPLIES[outcome];
    return { status, contentType: 'application/json', body: JSON.stringify({ code: 'FAIL', message }) };
  }

  private orderPath(order: PaymentOrder): string {
    return `/v3/pay/transactions/out-trade-no/${encodeURIComponent(order.orderNo)}`;
  }
}

/** Any other status is an answer we cannot act on; its error code (not its message) is worth naming. */
function expectStatus(operation: WechatPayOperation, answer: VerifiedAnswer, status: number): void {
  if (answer.status !== status) {
    const code = errorCodeOf(answer.body);
    throw unavailable(operation, `answered ${answer.status}${code ? ` ${code}` : ''}`);
  }
}
