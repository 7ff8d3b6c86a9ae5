import { eventually } from 'test/e2e/billing-helpers';
import { openDb } from 'test/e2e/e2e-helpers';
import { PaymentsWorld } from 'test/e2e/payments-helpers';

export interface OrderRow {
  status: string;
  provider_trade_no: string | null;
  confirmed_via: string | null;
  closed: boolean;
}

/** The order as Postgres holds it. */
export async function orderRow(world: PaymentsWorld, orderId: string): Promise<OrderRow> {
  const { rows } = await world.db.query<OrderRow>(
    `SELECT status, provider_trade_no, confirmed_via, closed_at IS NOT NULL AS closed FROM topup_orders WHERE id = $1`,
    [orderId],
  );
  return rows[0];
}

/** Polls the order until it has `status` (or the deadline passes); returns the last row read. */
export function waitForStatus(
  world: PaymentsWorld,
  orderId: string,
  status: string,
  timeoutMs = 10_000,
): Promise<OrderRow> {
  return eventually(
    () => orderRow(world, orderId),
    (row) => row.status === status,
    timeoutMs,
  );
}

/** The order's `topup` ledger entries, as Postgres holds them (exactly one once it is paid). */
export async function topupEntries(
  world: PaymentsWorld,
  orderId: string,
): Promise<{ account_id: string; amount: string }[]> {
  const { rows } = await world.db.query<{ account_id: string; amount: string }>(
    `SELECT account_id, amount::text AS amount FROM ledger_entries WHERE kind = 'topup' AND reference = $1`,
    [orderId],
  );
  return rows;
}

/**
 * Moves the order's expiry `secondsAgo` into the past, as if its time had run out. With `status: 'expired'`
 * the order is also expired in our database while the wallet still waits for the payer (its close was lost).
 */
export async function expireOrder(
  world: PaymentsWorld,
  orderId: string,
  status: 'pending' | 'expired' = 'pending',
  secondsAgo = 1,
): Promise<void> {
  await world.db.query(
    `UPDATE topup_orders SET expires_at = now() - make_interval(secs => $3), status = $2 WHERE id = $1`,
    [orderId, status, secondsAgo],
  );
}

/**
 * The order's row locked by a transaction of its own (BEGIN; SELECT … FOR UPDATE), so that no
 * confirmation of it can commit until `release`: what a stalled or unreachable Postgres looks like to
 * the worker, without stopping the server every test file shares.
 */
export async function lockOrderRow(orderId: string): Promise<{ release(): Promise<void> }> {
  const locker = await openDb();
  await locker.query('BEGIN');
  await locker.query('SELECT id FROM topup_orders WHERE id = $1 FOR UPDATE', [orderId]);
  return {
    async release(): Promise<void> {
      await locker.query('ROLLBACK');
      await locker.end();
    },
  };
}

/**
 * How many updates of an order wait for a lock (a confirmation held by `lockOrderRow`). Asked outside
 * any transaction: Postgres shows a transaction the activity as it was at its first look.
 */
export async function blockedOrderUpdates(world: PaymentsWorld): Promise<number> {
  const { rows } = await world.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'UPDATE "topup_orders"%'`,
  );
  return rows[0].n;
}
