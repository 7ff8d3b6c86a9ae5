import { DataSource } from 'typeorm';

export interface TopupMismatch {
  /** Null for a top-up entry that no order explains. */
  orderId: string | null;
  /** Null for a paid order without its entry. */
  entryId: string | null;
  status: string | null;
}

/**
 * Every top-up that breaks "an order is paid exactly when its one top-up entry exists, crediting its
 * account with its credit": a paid order without an entry, an entry of an unpaid or unknown order, or
 * an entry of another amount or account. An empty result means every top-up is in the books once.
 */
export async function findTopupMismatches(dataSource: DataSource): Promise<TopupMismatch[]> {
  const rows = await dataSource.query<{ order_id: string | null; entry_id: string | null; status: string | null }[]>(
    `SELECT o.id AS order_id, e.id AS entry_id, o.status
     FROM topup_orders o
     FULL JOIN (SELECT * FROM ledger_entries WHERE kind = 'topup') e ON e.reference = o.id::text
     WHERE (o.status = 'paid') IS DISTINCT FROM (e.id IS NOT NULL)
        OR e.amount <> o.credit OR e.account_id <> o.account_id`,
  );
  return rows.map((row) => ({ orderId: row.order_id, entryId: row.entry_id, status: row.status }));
}
