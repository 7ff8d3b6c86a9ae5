import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

/** A code an operator sold or gave away; stored hashed, it credits its amount to the first account that redeems it. */
@Entity('redemption_codes')
@Check('redemption_codes_amount_check', '"amount" > 0')
@Check('redemption_codes_void_check', '"voided_at" IS NULL OR "redeemed_at" IS NULL')
@Index('redemption_codes_created_idx', ['createdAt', 'id'])
@Index('redemption_codes_batch_created_idx', ['batchId', 'createdAt', 'id'])
export class RedemptionCodeEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** SHA-256 of the code (hex): the code itself is shown once and never stored. */
  @Index('redemption_codes_code_hash_key', { unique: true })
  @Column({ name: 'code_hash', type: 'text' })
  codeHash: string;

  /** The code's first group, for lists; null on codes made before prefixes were kept. */
  @Column({ name: 'code_prefix', type: 'text', nullable: true })
  codePrefix: string | null;

  /** Nano-dollars. */
  @Column({ type: 'bigint', transformer: bigintTransformer })
  amount: bigint;

  /** The codes created together. */
  @Column({ name: 'batch_id', type: 'uuid' })
  batchId: string;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'redeemed_at', type: 'timestamptz', nullable: true })
  redeemedAt: Date | null;

  @Column({ name: 'redeemed_by', type: 'uuid', nullable: true })
  redeemedBy: string | null;

  @ManyToOne('AccountEntity', { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'redeemed_by', foreignKeyConstraintName: 'redemption_codes_redeemed_by_fkey' })
  redeemer?: unknown;

  /** When an operator voided the code: it can no longer be redeemed. */
  @Column({ name: 'voided_at', type: 'timestamptz', nullable: true })
  voidedAt: Date | null;

  /** The top-up order the redemption created and paid. */
  @Column({ name: 'order_id', type: 'uuid', nullable: true })
  orderId: string | null;
}
