import { DataSource, EntityManager } from 'typeorm';

/**
 * Lifts DATABASE_STATEMENT_TIMEOUT_MS for the rest of `manager`'s transaction (0: no bound), for the
 * few statements that legitimately run longer. SET LOCAL ends with the transaction, so a
 * transaction-mode pooler hands the server connection on without it.
 */
export async function setLocalStatementTimeout(manager: EntityManager, timeoutMs: number): Promise<void> {
  await manager.query(`SET LOCAL statement_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
}

/** Runs `work` in one transaction whose statements may each run for `timeoutMs` (0: no bound). */
export function withStatementTimeout<T>(
  dataSource: DataSource,
  timeoutMs: number,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  return dataSource.transaction(async (manager) => {
    await setLocalStatementTimeout(manager, timeoutMs);
    return work(manager);
  });
}
