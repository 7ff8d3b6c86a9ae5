/** The tables partitioned by month of created_at (UTC months), and the partition names they take. */
export const PARTITIONED_TABLES = ['usage_records', 'ledger_entries'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** Months created ahead of the current one, so an insert never meets a month without its partition. */
export const MONTHS_AHEAD = 2;

export interface MonthPartition {
  table: PartitionedTable;
  /** `<table>_pYYYY_MM`, as the migration that partitioned the tables names them. */
  name: string;
  /** First instant of the month (UTC), inclusive. */
  from: Date;
  /** First instant of the next month (UTC), exclusive. */
  to: Date;
}

/** The first instant (UTC) of the month `offset` months after the one `at` falls in. */
export function monthStart(at: Date, offset = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
}

export function monthPartition(table: PartitionedTable, month: Date): MonthPartition {
  const from = monthStart(month);
  const year = from.getUTCFullYear();
  const mm = String(from.getUTCMonth() + 1).padStart(2, '0');
  return { table, name: `${table}_p${year}_${mm}`, from, to: monthStart(from, 1) };
}

/** This month's partition of `table` and the MONTHS_AHEAD after it. */
export function partitionsAhead(table: PartitionedTable, now: Date): MonthPartition[] {
  return Array.from({ length: MONTHS_AHEAD + 1 }, (_, offset) => monthPartition(table, monthStart(now, offset)));
}

/** The month a partition name stands for, or null for a name this scheme did not give. */
export function monthOf(table: PartitionedTable, name: string): Date | null {
  const match = new RegExp(`^${table}_p(\\d{4})_(\\d{2})$`).exec(name);
  if (!match) {
    return null;
  }
  const month = Number(match[2]);
  return month >= 1 && month <= 12 ? new Date(Date.UTC(Number(match[1]), month - 1, 1)) : null;
}

/**
 * Of `names` (partitions of usage_records), those past retention: a month is kept while it is the
 * current month or one of the `retentionMonths` before it, and dropped once it ended before that.
 * Names this scheme did not give are never touched.
 */
export function expiredUsagePartitions(names: string[], now: Date, retentionMonths: number): string[] {
  const oldestKept = monthStart(now, -retentionMonths);
  return names.filter((name) => {
    const month = monthOf('usage_records', name);
    return month !== null && month < oldestKept;
  });
}

/**
 * How many whole months after the current one already have a partition of `table` in `names`, counted
 * without a gap (the current month missing counts as -1): what an insert can still rely on if
 * maintenance stops. The partition-maintenance alert reads it.
 */
export function monthsCovered(table: PartitionedTable, names: string[], now: Date): number {
  const existing = new Set(names);
  let offset = 0;
  while (existing.has(monthPartition(table, monthStart(now, offset)).name)) {
    offset++;
  }
  return offset - 1;
}
