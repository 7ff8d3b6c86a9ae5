import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { bigintTransformer } from 'src/database/bigint.transformer';
import { LedgerEntryEntity, LedgerKind } from 'src/modules/ledger/ledger-entry.entity';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';

export interface LedgerPosting {
  accountId: string;
  kind: LedgerKind;
  /** Signed nano-dollars. */
  amount: bigint;
  reference: string;
  description?: string | null;
}

export type PostingResult =
  /** `version` is the account's balance version after the entry, for the Redis admission snapshot. */
  | { outcome: 'applied'; entry: LedgerEntryEntity; version: bigint }
  | { outcome: 'replayed'; entry: LedgerEntryEntity }
  | { outcome: 'insufficient_balance' }
  /** The balance would not fit in its column (a credit of absurd size). */
  | { outcome: 'out_of_range' }
  | { outcome: 'account_not_found' };

interface LedgerRow {
  id: string;
  account_id: string;
  kind: LedgerKind;
  amount: string;
  balance_after: string;
  reference: string;
  description: string | null;
  created_at: Date;
  seq: string;
  balance_version: string;
}

// One statement: the balance moves and its entry is written together or not at all, and the
// balance can never go below zero whatever runs concurrently (the row lock orders the updates).
const POST_ENTRY_SQL = `
  WITH updated AS (
    UPDATE accounts SET balance = balance + $2, balance_version = balance_version + 1
    WHERE id = $1 AND balance + $2 >= 0
    RETURNING balance, balance_version
  )
  INSERT INTO ledger_entries (account_id, kind, amount, balance_after, reference, description)
  SELECT $1, $3, $2, balance, $4, $5 FROM updated
  RETURNING *, (SELECT balance_version FROM updated) AS balance_version`;

const UNIQUE_VIOLATION = '23505';
const NUMERIC_OUT_OF_RANGE = '22003';

@Injectable()
export class LedgerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Applies a posting exactly once per (kind, reference); a repeat returns the first entry unchanged. */
  async post(posting: LedgerPosting, manager: EntityManager = this.dataSource.manager): Promise<PostingResult> {
    const { accountId, kind, amount, reference, description = null } = posting;
    try {
      const values = [accountId, amount.toString(), kind, reference, description];
      const rows = await manager.query<LedgerRow[]>(POST_ENTRY_SQL, values);
      if (rows.length === 1) {
        return { outcome: 'applied', entry: toEntity(rows[0]), version: BigInt(rows[0].balance_version) };
      }
      const exists = await manager.query<unknown[]>('SELECT 1 FROM accounts WHERE id = $1', [accountId]);
      return { outcome: exists.length ? 'insufficient_balance' : 'account_not_found' };
    } catch (error) {
      const code = error instanceof QueryFailedError ? (error.driverError as { code?: string }).code : undefined;
      if (code === UNIQUE_VIOLATION) {
        const existing = await manager.findOneByOrFail(LedgerEntryEntity, { kind, reference });
        return { outcome: 'replayed', entry: existing };
      }
      if (code === NUMERIC_OUT_OF_RANGE) {
        return { outcome: 'out_of_range' };
      }
      throw error;
    }
  }
}

function toEntity(row: LedgerRow): LedgerEntryEntity {
  return Object.assign(new LedgerEntryEntity(), {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    amount: bigintTransformer.from(row.amount) as bigint,
    balanceAfter: bigintTransformer.from(row.balance_after) as bigint,
    reference: row.reference,
    description: row.description,
    createdAt: row.created_at,
    seq: row.seq,
  });
}
