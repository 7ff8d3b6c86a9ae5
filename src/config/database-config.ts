import { EnvDto } from 'src/config/env.dto';

/**
 * One process's share of Postgres's connections, and the bounds on each one's use. Every API and
 * worker pod opens up to `poolMax`: the README's "Connection budget" sizes it against max_connections.
 */
export interface DatabasePool {
  poolMax: number;
  /**
   * A statement running longer is cancelled by the server (0: none is sent, the server's own setting
   * applies). Sent as a connection startup parameter, never as a session SET (docs/operations.md, PgBouncer).
   */
  statementTimeoutMs: number;
  /** Opening a connection, and waiting for a free one of the pool: past it the query fails at once. */
  connectTimeoutMs: number;
  /** An idle connection is closed after this long (0: never), so a quiet pod gives its share back. */
  idleTimeoutMs: number;
}

/**
 * 30 s: the longest statements of a request or a settlement take milliseconds (docs/performance.md);
 * what legitimately runs longer (partition maintenance, ledger:verify) lifts it for its own
 * transaction (src/common/database/statement-timeout.ts).
 */
export const DEFAULT_DATABASE_POOL: DatabasePool = {
  poolMax: 20,
  statementTimeoutMs: 30_000,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 10_000,
};

export function databasePoolOf(dto: EnvDto): DatabasePool {
  return {
    poolMax: dto.DATABASE_POOL_MAX ?? DEFAULT_DATABASE_POOL.poolMax,
    statementTimeoutMs: dto.DATABASE_STATEMENT_TIMEOUT_MS ?? DEFAULT_DATABASE_POOL.statementTimeoutMs,
    connectTimeoutMs: dto.DATABASE_CONNECT_TIMEOUT_MS ?? DEFAULT_DATABASE_POOL.connectTimeoutMs,
    idleTimeoutMs: dto.DATABASE_IDLE_TIMEOUT_MS ?? DEFAULT_DATABASE_POOL.idleTimeoutMs,
  };
}
