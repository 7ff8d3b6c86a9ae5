import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

export const DEPOSIT_STATUSES = ['credited', 'below_minimum'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

/**
 * Where `event_index` comes from: `chain`, the chain's own index (ERC20's log index, TRC20's event
 * index in its transaction); `listing`, TRC20 deposits recorded before 1795690000000, numbered by
 * their place in one address's listing, which two addresses paid by one transaction both started at 0.
 */
export type EventNumbering = 'chain' | 'listing';

/** A confirmed transfer to one of our addresses: credited through an order, or kept for the operator. */
@Entity('chain_deposits')
@Check('chain_deposits_status_check', `"status" IN ('credited', 'below_minimum')`)
@Check('chain_deposits_amount_check', `"amount" > 0`)
@Check('chain_deposits_numbering_check', `"numbering" IN ('chain', 'listing')`)
// The same transfer, read twice (a repeated page, an overlapping range, two workers), is one deposit.
// The numbering is part of it so that an old listing number never stands in the place of a chain index.
@Index('chain_deposits_reference_key', ['network', 'txid', 'eventIndex', 'numbering'], { unique: true })
@Index('chain_deposits_status_seq_idx', ['status', 'seq'])
// The TRC20 watcher's "seen in the last hour" and "this transaction is recorded for this address".
@Index('chain_deposits_address_created_idx', ['network', 'address', 'createdAt'])
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

  @Column({ type: 'text', default: 'chain' })
  numbering: EventNumbering;

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
