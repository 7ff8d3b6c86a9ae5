import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

export const DEPOSIT_STATUSES = ['credited', 'below_minimum'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

/** A confirmed transfer to one of our addresses: credited through an order, or kept for the operator. */
@Entity('chain_deposits')
@Check('chain_deposits_status_check', `"status" IN ('credited', 'below_minimum')`)
@Check('chain_deposits_amount_check', `"amount" > 0`)
// The same transfer, read twice (a repeated page, an overlapping range, two workers), is one deposit.
@Index('chain_deposits_reference_key', ['network', 'txid', 'eventIndex'], { unique: true })
@Index('chain_deposits_status_seq_idx', ['status', 'seq'])
export class ChainDepositEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Index('chain_deposits_seq_key', { unique: true })
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', insert: false, update: false })
  seq: string;

  @Column({ type: 'text' })
  network: UsdtNetwork;

  @Column({ type: 'text' })
  txid: string;

  @Column({ name: 'event_index', type: 'integer' })
  eventIndex: number;

  @Column({ type: 'text' })
  address: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne('AccountEntity', { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'chain_deposits_account_id_fkey' })
  account?: unknown;

  /** USDT micros. */
  @Column({ type: 'bigint', transformer: bigintTransformer })
  amount: bigint;

  @Column({ name: 'block_number', type: 'bigint', nullable: true, transformer: bigintTransformer })
  blockNumber: bigint | null;

  @Column({ type: 'text' })
  status: DepositStatus;

  /** The order it paid; null below the minimum. */
  @Column({ name: 'order_id', type: 'uuid', nullable: true })
  orderId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
