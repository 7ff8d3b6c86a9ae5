import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { Check, Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** The operator's payment settings: one row. */
@Entity('payment_settings')
@Check('payment_settings_single_row', '"id" = 1')
@Check('payment_settings_bounds_check', '"min_topup_usd" > 0 AND "max_topup_usd" >= "min_topup_usd"')
export class PaymentSettingsEntity {
  @PrimaryColumn({ type: 'smallint' })
  id: number;

  /** CNY per USD, a decimal string with at most 6 places; null until the operator sets it (CNY is then off). */
  @Column({ name: 'cny_per_usd', type: 'text', nullable: true })
  cnyPerUsd: string | null;

  /** Nano-dollars: the least and the most one order may credit. */
  @Column({ name: 'min_topup_usd', type: 'bigint', transformer: bigintTransformer })
  minTopupUsd: bigint;

  @Column({ name: 'max_topup_usd', type: 'bigint', transformer: bigintTransformer })
  maxTopupUsd: bigint;

  @Column({ name: 'order_ttl_minutes', type: 'integer' })
  orderTtlMinutes: number;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
