import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

/**
 * below_minimum: waiting for more to the same address to reach USDT_MIN_DEPOSIT; credited: paid its
 * order (alone, or with the small ones it completed); reorged: gone from the chain after it was recorded.
 */
export const DEPOSIT_STATUSES = ['credited', 'below_minimum', 'reorged'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

/**
 * Where `event_index` comes from: `chain`, the chain's own index (ERC20's log index, TRC20's event
 * index in its transaction); `listing`, TRC20 deposits recorded before 1795690000000, numbered by
 * their place in one address's listing, which two addresses paid by one transaction both started at 0.
 */
export type EventNumbering = 'chain' | 'listing';

/** A confirmed transfer to one of our addresses: credited through an order, or kept for the operator. */
@Entity('chain_deposits')
@Check('chain_deposits_status_check', `"status" IN ('credited', 'below_minimum', 'reorged')`)
@Check('chain_deposits_amount_check', `"amount" > 0`)
@Check('chain_deposits_numbering_check', `"numbering" IN ('chain', 'listing')`)
// The same transfer, read twice (a repeated page, an overlapping range, two workers), is one deposit.
// The numbering is part of it so that an old listing number never stands in the place of a chain index.
@Index('chain_deposits_reference_key', ['network', 'txid', 'eventIndex', 'numbering'], { unique: true })
@Index('chain_deposits_status_seq_idx', ['status', 'seq'])
// The ERC20 watcher's look at what it recorded, until final.
@Index('chain_deposits_unfinalized_idx', ['network', 'seq'], { where: '"finalized_at" IS NULL' })
// An address's small deposits that wait to add up.
@Index('chain_deposits_below_minimum_idx', ['network', 'address'], { where: `"status" = 'below_minimum'` })
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

  /** ERC20: the block it was recorded in, to tell whether that block is still the chain's. */
  @Column({ name: 'block_hash', type: 'text', nullable: true })
  blockHash: string | null;

  /** When its block was final (at once for TRC20, whose listing is solidified); null while it is watched. */
  @Column({ name: 'finalized_at', type: 'timestamptz', nullable: true })
  finalizedAt: Date | null;

  @Column({ type: 'text' })
  status: DepositStatus;

  /** The order it paid (several small deposits may pay one); null while below the minimum. */
  @Column({ name: 'order_id', type: 'uuid', nullable: true })
  orderId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
