/** The wallets a CNY order can be paid with. */
export type WalletMethod = 'alipay' | 'wechatpay';

/** What a provider is told of an order. */
export interface PaymentOrder {
  /** Our order number at the provider (out_trade_no): the order's id without dashes, 32 hex characters. */
  orderNo: string;
  /** The amount in CNY with exactly two decimals, as both wallets write it ('12.30'). */
  amount: string;
  /** The same amount in fen (WeChat Pay's `amount.total`). */
  amountFen: bigint;
  /** Shown to the payer in the wallet. */
  subject: string;
  /** The provider stops accepting payment at this time. */
  expiresAt: Date;
}

/** What the payer needs: a QR code's content (Alipay) or a code URL to render as one (WeChat Pay). */
export type PaymentInstructions = { qrCode: string } | { codeUrl: string };

/** What the provider said of a payment, kept with the order: never a signature, key or whole body. */
export interface PaymentEvidence {
  provider: WalletMethod;
  /** The provider's trade number (Alipay `trade_no`, WeChat Pay `transaction_id`). */
  tradeNo: string;
  /** The amount paid, in CNY with two decimals, as the provider stated it. */
  amount: string;
  /** The provider's own status word (TRADE_SUCCESS, SUCCESS, ...). */
  rawStatus: string;
}

/** A notification whose signature checked out and that names our app or merchant. */
export interface VerifiedNotification {
  orderNo: string;
  /** Whether it says the payment succeeded; a notification of another state credits nothing. */
  paid: boolean;
  evidence: PaymentEvidence;
}

/** The provider's answer to our query of an order. */
export type PaymentState =
  | { state: 'paid'; evidence: PaymentEvidence }
  /** Not paid (yet): waiting, unknown to the provider, or closed. */
  | { state: 'unpaid'; rawStatus: string };

/** A notification exactly as it arrived: the signature covers the raw bytes. */
export interface RawNotification {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Why a notification was refused; the label of payment_notify_rejected_total. */
export type RejectReason =
  | 'malformed'
  | 'bad_signature'
  | 'unknown_key'
  | 'stale_timestamp'
  | 'decrypt_failed'
  | 'wrong_app'
  | 'unknown_order'
  | 'wrong_order'
  | 'wrong_amount';

/** A notification that must give no credit. The message names the reason only, never the body. */
export class NotificationRejected extends Error {
  constructor(
    readonly reason: RejectReason,
    message: string = reason,
  ) {
    super(message);
  }
}

/**
 * The provider could not be asked: unreachable, slow, an error answer, garbage or a bad signature on
 * its answer. The order stays as it is and the caller tries again later.
 */
export class ProviderUnavailable extends Error {}

/** How the webhook answers the wallet, in the wallet's own protocol. */
export interface WebhookReply {
  status: number;
  contentType?: string;
  body?: string;
}

/**
 * One wallet. Implementations hold their keys (from the environment) and never log them or a body.
 * Every call is bounded in time and in the bytes it reads.
 */
export interface PaymentProvider {
  readonly method: WalletMethod;
  /** Creates the payment at the provider; throws ProviderUnavailable when it cannot. */
  createPayment(order: PaymentOrder): Promise<PaymentInstructions>;
  /** Checks the signature (and app or merchant id) of a notification; throws NotificationRejected. */
  verifyNotification(raw: RawNotification): VerifiedNotification;
  /** Asks the provider for the order's state; throws ProviderUnavailable when it cannot. */
  query(order: PaymentOrder): Promise<PaymentState>;
  /** Tells the provider to stop accepting payment; throws ProviderUnavailable when it cannot. */
  close(order: PaymentOrder): Promise<void>;
  /** `committed`: the credit is written (or was already); `retry`: ask again later; `rejected`: never. */
  reply(outcome: 'committed' | 'retry' | 'rejected'): WebhookReply;
}
