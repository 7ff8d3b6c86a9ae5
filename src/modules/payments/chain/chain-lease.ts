import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';

/**
 * A lease lasts this long past its last renewal. A worker that dies mid-run keeps its network for
 * at most this long; a live holder renews it every third of it, so only a holder cut off from
 * Postgres (whose writes fail anyway) or stalled that long can lose it while still running.
 */
export const CHAIN_LEASE_TTL_MS = 30_000;

export interface ChainLeaseOptions {
  ttlMs?: number;
}

/**
 * Runs `work` while holding the network's lease, a row of `chain_watch_leases` (owner, expiry): of
 * several workers polling at once only one watches a network. Null when another holds it.
 *
 * A row rather than a session advisory lock: a lock held by a connection for the whole run would pin
 * a server connection, and behind a transaction-mode pooler (PgBouncer) it would be taken and
 * released on whichever server connection each statement happens to use. Each statement here is a
 * transaction of its own.
 */
export async function withChainLease<T>(
  dataSource: DataSource,
  network: string,
  work: () => Promise<T>,
  { ttlMs = CHAIN_LEASE_TTL_MS }: ChainLeaseOptions = {},
): Promise<T | null> {
  const owner = randomUUID();
  if (!(await takeLease(dataSource, network, owner, ttlMs))) {
    return null;
  }
  const renewals = setInterval(() => {
    // A failed renewal is retried at the next tick; the lease outlives two missed ones.
    renewLease(dataSource, network, owner, ttlMs).catch(() => undefined);
  }, ttlMs / 3);
  renewals.unref();
  try {
    return await work();
  } finally {
    clearInterval(renewals);
    // Not released (Postgres away): it lapses by itself within ttlMs, and the run's own outcome stands.
    await releaseLease(dataSource, network, owner).catch(() => undefined);
  }
}

/** Taken when the network has no lease or only an expired one; the database's clock decides. */
async function takeLease(dataSource: DataSource, network: string, owner: string, ttlMs: number): Promise<boolean> {
  const taken = await dataSource.query<unknown[]>(
    `INSERT INTO chain_watch_leases (network, owner, expires_at)
     VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond')
     ON CONFLICT (network) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
     WHERE chain_watch_leases.expires_at <= clock_timestamp()
     RETURNING owner`,
    [network, owner, ttlMs],
  );
  return taken.length === 1;
}

/** Pushes the expiry on; a lease that lapsed and was taken by another stays theirs. */
async function renewLease(dataSource: DataSource, network: string, owner: string, ttlMs: number): Promise<void> {
  await dataSource.query(
    `UPDATE chain_watch_leases SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
     WHERE network = $1 AND owner = $2`,
    [network, owner, ttlMs],
  );
}

async function releaseLease(dataSource: DataSource, network: string, owner: string): Promise<void> {
  await dataSource.query('DELETE FROM chain_watch_leases WHERE network = $1 AND owner = $2', [network, owner]);
}
