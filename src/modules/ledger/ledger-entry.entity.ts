import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

export const LEDGER_KINDS = ['topup', 'usage', 'referral_credit', 'adjustment'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

@Entity('ledger_entries')
@Check('ledger_entries_kind_check', `"kind" IN ('topup', 'usage', 'referral_credit', 'adjustment')`)
@Index('ledger_entries_kind_reference_key', ['kind', 'reference'], { unique: true })
@Index('ledger_entries_account_created_idx', ['accountId', 'createdAt'])
@Index('ledger_entries_account_seq_idx', ['accountId', 'seq'])
// Recent balance changes made outside settlement, for the worker's Redis resync (BalanceResyncService).
@Index('ledger_entries_pushed_changes_idx', ['createdAt'], { where: `"kind" IN ('adjustment', 'topup')` })
export class LedgerEntryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /**
   * Insertion order. An account's entries are written under its row lock, so for one account this is
   * the order they were applied in (timestamps are not: a transaction's now() is when it began).
   */
  @Index('ledger_entries_seq_key', { unique: true })
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', insert: false, update: false })
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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
