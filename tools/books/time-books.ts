import { DayRange } from 'src/common/http/date-range.dto';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';
import { UsageRepository } from 'src/modules/usage/usage.repository';
import { DataSource } from 'typeorm';

/** The console's page size plus one, as UsageService and the ledger view ask for it. */
const PAGE = 51;

export interface QueryTiming {
  query: string;
  samples: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

/** The queries a customer's console and an operator's check run for one account, through the real repositories. */
export function bookQueries(dataSource: DataSource, accountId: string): Record<string, () => Promise<unknown>> {
  const usage = new UsageRepository(dataSource);
  const ledger = new LedgerRepository(dataSource);
  const all: DayRange = { from: null, to: null };
  const today = new Date().toISOString().slice(0, 10);
  const lastWeek = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
  const week: DayRange = { from: lastWeek, to: today };
  return {
    'bills, first page': () => usage.bills(accountId, all, null, PAGE),
    'bills, last 7 days': () => usage.bills(accountId, week, null, PAGE),
    'usage by day and model, last 7 days': () => usage.totals(accountId, week, ['day', 'model']),
    'usage by model, all time': () => usage.totals(accountId, all, ['model']),
    'ledger, first page': () => ledger.entries(accountId, all, null, PAGE),
    'ledger, last 7 days': () => ledger.entries(accountId, week, null, PAGE),
    'ledger:verify, one account': () => findLedgerMismatches(dataSource, accountId),
  };
}

/** Runs each query `samples` times after a few warm-up runs, one at a time, and reports its percentiles. */
export async function timeBooks(dataSource: DataSource, accountId: string, samples: number): Promise<QueryTiming[]> {
  const timings: QueryTiming[] = [];
  for (const [query, run] of Object.entries(bookQueries(dataSource, accountId))) {
    for (let warmup = 0; warmup < 3; warmup++) {
      await run();
    }
    const took: number[] = [];
    for (let sample = 0; sample < samples; sample++) {
      const started = process.hrtime.bigint();
      await run();
      took.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    took.sort((a, b) => a - b);
    const at = (fraction: number) => round(took[Math.min(took.length - 1, Math.ceil(fraction * took.length) - 1)]);
    timings.push({ query, samples, p50Ms: at(0.5), p95Ms: at(0.95), maxMs: round(took[took.length - 1]) });
  }
  return timings;
}

/**
 * The partitions a query reads, from its plan: `run` calls a repository on a DataSource whose
 * query() EXPLAINs the exact SQL and parameters instead of running them (and answers no rows).
 * Without ANALYZE, what the plan names is what is left after pruning at plan time.
 */
export async function partitionsScanned(
  dataSource: DataSource,
  run: (explaining: DataSource) => Promise<unknown>,
): Promise<string[]> {
  const plans: unknown[] = [];
  const explaining = new Proxy(dataSource, {
    get(target, property, receiver) {
      if (property !== 'query') {
        return Reflect.get(target, property, receiver) as unknown;
      }
      return async (sql: string, params?: unknown[]) => {
        const [row] = await target.query<{ 'QUERY PLAN': unknown }[]>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
        plans.push(row['QUERY PLAN']);
        return [];
      };
    },
  });
  await run(explaining);
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
    } else if (node && typeof node === 'object') {
      const relation = (node as Record<string, unknown>)['Relation Name'];
      if (typeof relation === 'string') {
        names.add(relation);
      }
      Object.values(node).forEach(visit);
    }
  };
  visit(plans);
  return [...names].sort();
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
