import { bigintTransformer } from 'src/common/database/bigint.transformer';
import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Generated,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';

export const LEDGER_KINDS = ['topup', 'usage', 'referral_credit', 'adjustment'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/**
 * Partitioned by month of created_at (migration PartitionBooks, docs/billing.md "Partitioned books").
 * A unique index there would have to include created_at, so "once per (kind, reference)" is kept by
 * LedgerReferenceEntity, written by the same statement; this index is for reading.
 */
@Entity('ledger_entries')
@Check('ledger_entries_kind_check', `"kind" IN ('topup', 'usage', 'referral_credit', 'adjustment')`)
@Index('ledger_entries_kind_reference_idx', ['kind', 'reference'])
@Index('ledger_entries_account_created_idx', ['accountId', 'createdAt'])
@Index('ledger_entries_account_seq_idx', ['accountId', 'seq'])
// Recent balance changes made outside settlement, for the worker's Redis resync (BalanceResyncService).
@Index('ledger_entries_pushed_changes_idx', ['createdAt'], { where: `"kind" IN ('adjustment', 'topup')` })
export class LedgerEntryEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'ledger_entries_pkey' })
  id: string;

  /**
   * Insertion order. An account's entries are written under its row lock, so for one account this is
   * the order they were applied in (timestamps are not: a transaction's now() is when it began).
   * One sequence numbers every partition, so seq is unique without a unique index (which Postgres
   * would only take with created_at in it); an identity column is refused on a partitioned table.
   */
  @Column({ type: 'bigint', insert: false, update: false })
  @Generated('increment')
  seq: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  // The foreign key only, named rather than imported: accounts post through the ledger, so the
  // ledger knows them by name (the entity is never loaded with its account).
  @ManyToOne('AccountEntity', { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'ledger_entries_account_id_fkey' })
  account?: unknown;

  @Column({ type: 'text' })
  kind: LedgerKind;

  /** Signed nano-dollars: positive credits, negative debits. */
  @Column({ type: 'bigint', transformer: bigintTransformer })
  amount: bigint;

  @Column({ name: 'balance_after', type: 'bigint', transformer: bigintTransformer })
  balanceAfter: bigint;

  /** What caused the entry (request id, top-up id, adjustment id); unique per kind so nothing applies twice. */
  @Column({ type: 'text' })
  reference: string;

  /** Operator's reason for an adjustment; never request content. */
  @Column({ type: 'text', nullable: true })
  description: string | null;

  /** The partition key, so part of the primary key. */
  @CreateDateColumn({
    name: 'created_at',
    type: 'timestamptz',
    primary: true,
    primaryKeyConstraintName: 'ledger_entries_pkey',
  })
  createdAt: Date;
}
