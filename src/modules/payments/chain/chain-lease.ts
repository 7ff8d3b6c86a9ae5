import { DataSource } from 'typeorm';

/**
 * Runs `work` while holding the network's lease, a Postgres session lock: of several workers polling
 * at once only one watches a network, and a worker that dies gives the lease up with its connection.
 * Null when another holds it.
 */
export async function withChainLease<T>(
  dataSource: DataSource,
  network: string,
  work: () => Promise<T>,
): Promise<T | null> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const key = `chain-watch:${network}`;
  try {
    const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [
      key,
    ])) as { locked: boolean }[];
    if (!locked) {
      return null;
    }
    try {
      return await work();
    } finally {
      await runner.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]);
    }
  } finally {
    await runner.release();
  }
}
