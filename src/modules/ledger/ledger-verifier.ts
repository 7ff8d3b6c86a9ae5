import { DataSource } from 'typeorm';

export interface LedgerMismatch {
  accountId: string;
  balance: bigint;
  ledgerSum: bigint;
  /** balance_after of the account's latest entry (null without entries). */
  lastBalanceAfter: bigint | null;
}

/**
 * Every account whose balance is not the sum of its ledger entries, or disagrees with its latest
 * entry's balance_after. An empty result means the books balance. `accountId` checks that one
 * account only (through its index, whatever the size of the ledger).
 */
export async function findLedgerMismatches(
  dataSource: Pick<DataSource, 'query'>,
  accountId?: string,
): Promise<LedgerMismatch[]> {
  const rows = await dataSource.query<{ id: string; balance: string; total: string; last: string | null }[]>(
    `SELECT a.id, a.balance, COALESCE(s.total, 0) AS total, s.last
     FROM accounts a
     LEFT JOIN (
       SELECT account_id, SUM(amount) AS total,
              (ARRAY_AGG(balance_after ORDER BY seq DESC))[1] AS last
       FROM ledger_entries WHERE ($1::uuid IS NULL OR account_id = $1::uuid) GROUP BY account_id
     ) s ON s.account_id = a.id
     WHERE ($1::uuid IS NULL OR a.id = $1::uuid)
       AND (a.balance <> COALESCE(s.total, 0) OR (s.last IS NOT NULL AND s.last <> a.balance) OR a.balance < 0)`,
    [accountId ?? null],
  );
  return rows.map((row) => ({
    accountId: row.id,
    balance: BigInt(row.balance),
    ledgerSum: BigInt(row.total),
    lastBalanceAfter: row.last === null ? null : BigInt(row.last),
  }));
}
