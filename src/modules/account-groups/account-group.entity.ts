import { Check, Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** The group every account is in until an operator moves it. */
export const DEFAULT_GROUP_ID = 'default';

/**
 * A tier of customers (a reseller's wholesale price, say): what its accounts pay is the model's price
 * times `priceMultiplier`; `rpm`/`tpm`, when set, replace the models' default limits for them.
 */
@Entity('account_groups')
@Check('account_groups_price_multiplier_check', '"price_multiplier" > 0 AND "price_multiplier" <= 100')
export class AccountGroupEntity {
  /** A short name chosen by the operator, e.g. `wholesale`. */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'account_groups_pkey' })
  id: string;

  @Column({ type: 'text', default: '' })
  description: string;

  /** A decimal string as Postgres returns numeric (e.g. "0.800000"); read with parseMultiplier. */
  @Column({ name: 'price_multiplier', type: 'numeric', precision: 9, scale: 6, default: '1' })
  priceMultiplier: string;

  /** Requests per minute on every model for the group's accounts; null: each model's own default. */
  @Column({ type: 'integer', nullable: true })
  rpm: number | null;

  /** Tokens per minute on every model; null: each model's own default. */
  @Column({ type: 'integer', nullable: true })
  tpm: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
