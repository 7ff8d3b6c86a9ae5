import { Entity, PrimaryColumn } from 'typeorm';

/**
 * Every (kind, reference) the ledger has applied: the guard that makes a posting apply once. It is
 * not partitioned, so its primary key is global, which a unique index on the partitioned
 * ledger_entries cannot be. POST_MANY_SQL writes it in the same statement as the entry.
 */
@Entity('ledger_references')
export class LedgerReferenceEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'ledger_references_pkey' })
  kind: string;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'ledger_references_pkey' })
  reference: string;
}
