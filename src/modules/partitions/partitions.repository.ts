import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { setLocalStatementTimeout } from 'src/common/database/statement-timeout';
import { MonthPartition, PartitionedTable } from 'src/modules/partitions/month-partitions';
import { DataSource, EntityManager } from 'typeorm';

/** Any fixed number both workers agree on: the advisory lock that makes one worker at a time maintain partitions. */
const MAINTENANCE_LOCK = 0x626f6f6b73; // "books"

/**
 * Creating or dropping a partition takes an exclusive lock on the parent for a moment. Waiting for
 * it behind a long query would queue every settlement behind the wait, so the wait is bounded and
 * a maintenance that times out is retried on the next run.
 */
const LOCK_TIMEOUT_MS = 5_000;

/**
 * A migration's bound rather than DATABASE_STATEMENT_TIMEOUT_MS: attaching a month's partition scans
 * the default partition for its rows, which takes as long as that partition is large.
 */
const STATEMENT_TIMEOUT_MS = 10 * 60_000;

@Injectable()
export class PartitionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` in one transaction holding the maintenance lock: a second worker waits, then finds
   * the partitions made and does nothing.
   */
  underMaintenanceLock<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
      await setLocalStatementTimeout(manager, STATEMENT_TIMEOUT_MS);
      await manager.query('SELECT pg_advisory_xact_lock($1)', [MAINTENANCE_LOCK]);
      return work(manager);
    });
  }

  /** The names of `table`'s partitions. */
  async partitionsOf(manager: EntityManager, table: PartitionedTable): Promise<string[]> {
    const rows = await manager.query<{ name: string }[]>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = $1::regclass ORDER BY c.relname`,
      [table],
    );
    return rows.map((row) => row.name);
  }

  /** Idempotent: a partition that exists already is left as it is. */
  async create(manager: EntityManager, partition: MonthPartition): Promise<void> {
    await manager.query(
      `CREATE TABLE IF NOT EXISTS "${partition.name}" PARTITION OF "${partition.table}"
       FOR VALUES FROM ('${partition.from.toISOString()}') TO ('${partition.to.toISOString()}')`,
    );
  }

  /** Detaches the partition, then drops it with its rows. */
  async drop(manager: EntityManager, table: PartitionedTable, name: string): Promise<void> {
    await manager.query(`ALTER TABLE "${table}" DETACH PARTITION "${name}"`);
    await manager.query(`DROP TABLE "${name}"`);
  }
}
