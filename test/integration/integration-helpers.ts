import { randomUUID } from 'node:crypto';
import { dataSourceOptions } from 'src/database/data-source.options';
import { findLedgerMismatches, LedgerMismatch } from 'src/modules/ledger/ledger-verifier';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';
import { DataSource } from 'typeorm';

export interface LedgerRow {
  kind: string;
  amount: bigint;
  balanceAfter: bigint;
  reference: string;
  description: string | null;
  seq: bigint;
  createdAt: Date;
}

/**
 * The run's fresh database (global-setup.ts), shared with the other suites of the run: every test
 * makes its own accounts, so nothing is truncated and the books stay balanced for the suites after.
 */
export class TestDb {
  readonly ledger: LedgerRepository;

  private constructor(readonly dataSource: DataSource) {
    this.ledger = new LedgerRepository(dataSource);
  }

  /** The run's database, or another one (a copy the test made of it). */
  static async open(databaseUrl = process.env.DATABASE_URL!): Promise<TestDb> {
    const dataSource = new DataSource(dataSourceOptions({ databaseUrl }));
    await dataSource.initialize();
    return new TestDb(dataSource);
  }

  close(): Promise<void> {
    return this.dataSource.destroy();
  }

  /**
   * A new account, credited `balance` through the ledger (an adjustment) as an operator would; its
   * e-mail counts as verified unless `verified` is false.
   */
  async newAccount(options: { balance?: bigint; referredBy?: string; verified?: boolean } = {}): Promise<string> {
    const [{ id }] = await this.dataSource.query<{ id: string }[]>(
      `INSERT INTO accounts (email, password_hash, referral_code, referred_by, email_verified_at)
       VALUES ($1, 'not-a-hash', $2, $3, CASE WHEN $4 THEN now() END) RETURNING id`,
      [
        `ledger-${randomUUID()}@example.com`,
        randomUUID().slice(0, 12),
        options.referredBy ?? null,
        options.verified !== false,
      ],
    );
    if (options.balance) {
      const credited = await this.ledger.post({
        accountId: id,
        kind: 'adjustment',
        amount: options.balance,
        reference: `test-credit:${id}`,
      });
      expect(credited.outcome).toBe('applied');
    }
    return id;
  }

  async balanceOf(accountId: string): Promise<{ balance: bigint; version: bigint }> {
    const [row] = await this.dataSource.query<{ balance: string; balance_version: string }[]>(
      'SELECT balance, balance_version FROM accounts WHERE id = $1',
      [accountId],
    );
    return { balance: BigInt(row.balance), version: BigInt(row.balance_version) };
  }

  /** The account's entries in the order they were applied (seq), the opening credit left out. */
  async entriesOf(accountId: string): Promise<LedgerRow[]> {
    const rows = await this.dataSource.query<
      {
        kind: string;
        amount: string;
        balance_after: string;
        reference: string;
        description: string | null;
        seq: string;
        created_at: Date;
      }[]
    >(
      `SELECT kind, amount, balance_after, reference, description, seq, created_at FROM ledger_entries
       WHERE account_id = $1 AND reference <> $2 ORDER BY seq`,
      [accountId, `test-credit:${accountId}`],
    );
    return rows.map((row) => ({
      kind: row.kind,
      amount: BigInt(row.amount),
      balanceAfter: BigInt(row.balance_after),
      reference: row.reference,
      description: row.description,
      seq: BigInt(row.seq),
      createdAt: row.created_at,
    }));
  }

  /** Those of `accountIds` whose balance is not the sum of their entries and their latest balance_after. */
  async unbalanced(accountIds: string[]): Promise<LedgerMismatch[]> {
    return (await findLedgerMismatches(this.dataSource)).filter((mismatch) => accountIds.includes(mismatch.accountId));
  }
}

/** A reference no other test uses. */
export const newReference = (prefix = 'ref') => `${prefix}:${randomUUID()}`;
