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
export async function findTopupMismatches(dataSource: Pick<DataSource, 'query'>): Promise<TopupMismatch[]> {
  const rows = await dataSource.query<{ order_id: string | null; entry_id: string | null; status: string | null }[]>(
    `SELECT o.id AS order_id, e.id AS entry_id, o.status
     FROM topup_orders o
     FULL JOIN (SELECT * FROM ledger_entries WHERE kind = 'topup') e ON e.reference = o.id::text
     WHERE (o.status = 'paid') IS DISTINCT FROM (e.id IS NOT NULL)
        OR e.amount <> o.credit OR e.account_id <> o.account_id`,
  );
  return rows.map((row) => ({ orderId: row.order_id, entryId: row.entry_id, status: row.status }));
}

export interface DepositMismatch {
  /** Null for a chain-paid order that no deposit explains. */
  depositId: string | null;
  orderId: string | null;
}

/**
 * Every chain deposit that breaks "a credited deposit paid exactly one USDT order of its account and
 * network, the deposits of an order (credited, or reorged since) carried exactly what it credited and
 * one of them is its trade number, and one below the minimum paid none", and every order paid by a
 * chain that no deposit explains.
 */
export async function findDepositMismatches(dataSource: Pick<DataSource, 'query'>): Promise<DepositMismatch[]> {
  const rows = await dataSource.query<{ deposit_id: string | null; order_id: string | null }[]>(
    `WITH paid_by AS (
       SELECT order_id, SUM(amount) AS amount, array_agg(txid || ':' || event_index) AS refs
       FROM chain_deposits WHERE order_id IS NOT NULL GROUP BY order_id
     )
     SELECT d.id AS deposit_id, COALESCE(d.order_id, o.id) AS order_id
     FROM chain_deposits d
     FULL JOIN (SELECT * FROM topup_orders WHERE confirmed_via = 'chain') o ON o.id = d.order_id
     LEFT JOIN paid_by p ON p.order_id = o.id
     WHERE (d.status = 'below_minimum' AND d.order_id IS NOT NULL)
        OR (d.status = 'credited' AND d.order_id IS NULL)
        OR (d.order_id IS NOT NULL AND (o.id IS NULL OR o.status <> 'paid' OR o.currency <> 'USDT'
            OR o.network <> d.network OR o.account_id <> d.account_id OR o.credit <> p.amount * 1000
            OR NOT (o.provider_trade_no = ANY (p.refs))))
        OR (d.id IS NULL)`,
  );
  return rows.map((row) => ({ depositId: row.deposit_id, orderId: row.order_id }));
}
