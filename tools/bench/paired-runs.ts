import { round } from 'tools/bench/load-result';
import { BenchReport, BenchRow } from 'tools/bench/report';

/** One scenario and target, run alternately on a base build and on this one. */
export interface PairedFigures {
  scenario: string;
  target: string;
  /** Per run, in the order run: req/s, and the answering process's CPU µs per request (null if too few answers). */
  base: { requestsPerSec: number[]; cpuUsPerRequest: (number | null)[] };
  head: { requestsPerSec: number[]; cpuUsPerRequest: (number | null)[] };
  /** Median CPU per request, head ÷ base; null without figures on both sides. */
  cpuMedianRatio: number | null;
  /** Pairs (base run i, head run i) in which the head spent less CPU per request. */
  headCheaperPairs: number;
  pairs: number;
}

export function median(values: number[]): number | null {
  if (values.length === 0) {
    return null;
  }
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const rowKey = (row: Pick<BenchRow, 'scenario' | 'target'>) => `${row.scenario} ${row.target}`;

/**
 * Lines up the reports of alternating runs, base and head, by scenario and target: only rows present in
 * every report of both sides are compared, so a scenario one build does not have is left out, not half-paired.
 */
export function pairReports(base: BenchReport[], head: BenchReport[]): PairedFigures[] {
  const pairs = Math.min(base.length, head.length);
  const everyRun = [...base.slice(0, pairs), ...head.slice(0, pairs)];
  const first = everyRun[0]?.rows ?? [];
  const common = first.filter((row) => everyRun.every((report) => report.rows.some((r) => rowKey(r) === rowKey(row))));
  return common.map(({ scenario, target }) => {
    const key = rowKey({ scenario, target });
    const side = (reports: BenchReport[]) => {
      const rows = reports.slice(0, pairs).map((report) => report.rows.find((r) => rowKey(r) === key)!);
      return {
        requestsPerSec: rows.map((row) => row.requestsPerSec),
        cpuUsPerRequest: rows.map((row) => row.server?.cpuUsPerRequest ?? null),
      };
    };
    const before = side(base);
    const after = side(head);
    const known = (values: (number | null)[]) => values.filter((value): value is number => value !== null);
    const baseMedian = median(known(before.cpuUsPerRequest));
    const headMedian = median(known(after.cpuUsPerRequest));
    const headCheaperPairs = after.cpuUsPerRequest.filter((cpu, i) => {
      const was = before.cpuUsPerRequest[i];
      return cpu !== null && was !== null && cpu < was;
    }).length;
    return {
      scenario,
      target,
      base: before,
      head: after,
      cpuMedianRatio: baseMedian && headMedian !== null ? round(headMedian / baseMedian, 3) : null,
      headCheaperPairs,
      pairs,
    };
  });
}

const list = (values: (number | null)[]) => values.map((value) => (value === null ? '-' : String(value))).join(', ');

/** A Markdown table of every run's figures, with the median CPU change: the evidence a change is judged by. */
export function formatPairs(paired: PairedFigures[]): string {
  const header = [
    '| scenario | target | base req/s | head req/s | base CPU µs/req | head CPU µs/req | median CPU | head cheaper |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const lines = paired.map((row) => {
    const change =
      row.cpuMedianRatio === null
        ? '-'
        : `${row.cpuMedianRatio >= 1 ? '+' : ''}${round((row.cpuMedianRatio - 1) * 100, 1)} %`;
    return `| ${row.scenario} | ${row.target} | ${list(row.base.requestsPerSec)} | ${list(row.head.requestsPerSec)} | ${list(row.base.cpuUsPerRequest)} | ${list(row.head.cpuUsPerRequest)} | ${change} | ${row.headCheaperPairs} of ${row.pairs} |`;
  });
  return [...header, ...lines].join('\n');
}
