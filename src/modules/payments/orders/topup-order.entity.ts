import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { TopupCurrency } from 'src/values/amounts';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

export const TOPUP_STATUSES = ['pending', 'paid', 'expired'] as const;
export type TopupStatus = (typeof TOPUP_STATUSES)[number];

/** How an order is paid: a wallet or a redemption code; a USDT order has no method, but a network. */
export const TOPUP_METHODS = ['alipay', 'wechatpay', 'redemption'] as const;
export type TopupMethod = (typeof TOPUP_METHODS)[number];

/** What confirmed an order: the label of payment_confirm_seconds. */
export type ConfirmedVia = 'webhook' | 'poller' | 'recheck' | 'redemption' | 'chain';

/** What the provider said of the payment that paid an order; no secret, signature or whole body. */
export interface StoredEvidence {
  provider: string;
  tradeNo: string;
  amount: string;
  rawStatus: string;
}

@Entity('topup_orders')
@Check('topup_orders_status_check', `"status" IN ('pending', 'paid', 'expired')`)
@Check('topup_orders_currency_check', `"currency" IN ('CNY', 'USDT', 'USD')`)
@Check('topup_orders_amounts_check', `"amount" > 0 AND "credit" > 0`)
@Index('topup_orders_account_seq_idx', ['accountId', 'seq'])
@Index('topup_orders_status_seq_idx', ['status', 'seq'])
// The worker's sweep of pending orders past their expiry.
@Index('topup_orders_pending_expiry_idx', ['expiresAt'], { where: `"status" = 'pending'` })
// The worker's late-payment checks of expired orders a wallet did not confirm closed.
@Index('topup_orders_late_expiry_idx', ['expiresAt'], { where: `"status" = 'expired' AND "closed_at" IS NULL` })
// One payment at the provider credits one order at most.
@Index('topup_orders_trade_key', ['method', 'providerTradeNo'], {
  unique: true,
  where: '"provider_trade_no" IS NOT NULL',
})
export class TopupOrderEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Creation order, for cursors (timestamps alone do not order rows created in the same microsecond). */
  @Index('topup_orders_seq_key', { unique: true })
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', insert: false, update: false })
  seq: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne('AccountEntity', { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'topup_orders_account_id_fkey' })
  account?: unknown;

  @Column({ type: 'text' })
  status: TopupStatus;

  @Column({ type: 'text' })
  currency: TopupCurrency;

  @Column({ type: 'text', nullable: true })
  method: TopupMethod | null;

  /** USDT's chain (TRC20, ERC20); null for the other methods. */
  @Column({ type: 'text', nullable: true })
  network: string | null;

  /** In the currency's smallest unit (fen, USDT's 6-decimal unit, nano-dollars for USD). */
  @Column({ type: 'bigint', transformer: bigintTransformer })
  amount: bigint;

  /** Nano-dollars the order credits once paid. */
  @Column({ type: 'bigint', transformer: bigintTransformer })
  credit: bigint;

  /** CNY per USD copied from the settings when the order was created (CNY orders only). */
  @Column({ type: 'text', nullable: true })
  rate: string | null;

  /** What the payer needs: `{ qrCode }`, `{ codeUrl }`, or `{ address, network, confirmations, required }`. */
  @Column({ type: 'jsonb', nullable: true })
  instructions: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true })
  evidence: StoredEvidence | null;

  @Column({ name: 'provider_trade_no', type: 'text', nullable: true })
  providerTradeNo: string | null;

  @Column({ name: 'confirmed_via', type: 'text', nullable: true })
  confirmedVia: ConfirmedVia | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'paid_at', type: 'timestamptz', nullable: true })
  paidAt: Date | null;

  /** USDT: when a transfer that paid it was found gone from the chain (a reorg); the credit stays for the operator to review. */
  @Column({ name: 'reorged_at', type: 'timestamptz', nullable: true })
  reorgedAt: Date | null;

  /** When the provider confirmed it stopped accepting payment. */
  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true })
  closedAt: Date | null;

  /** When the sweep last asked the wallet about this expired order, should it have been paid late. */
  @Column({ name: 'late_checked_at', type: 'timestamptz', nullable: true })
  lateCheckedAt: Date | null;
}

/** Our order number at the providers: the id without dashes (WeChat Pay allows 32 characters). */
export function orderNoOf(orderId: string): string {
  return orderId.replace(/-/g, '');
}

/** The order id an order number names, or null when it is not one of ours. */
export function orderIdOf(orderNo: string): string | null {
  const match = /^([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/.exec(orderNo);
  return match ? match.slice(1).join('-') : null;
}
