import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, freemem, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { BillingBacklog } from 'tools/bench/billing-backlog';
import { LoadResult, Percentiles, round } from 'tools/bench/load-result';
import { LoginFloodResult } from 'tools/bench/login-flood';
import { ProcessUsage } from 'tools/bench/process-sampler';
import { RedisCost } from 'tools/bench/redis-cost';
import { Target } from 'tools/bench/scenarios';
import { SlowStreamMemory } from 'tools/bench/slow-stream-memory';
import { StreamMemory } from 'tools/bench/long-stream';

/** The gateway against one baseline of the same scenario. */
export interface Comparison {
  /** Gateway req/s ÷ baseline req/s. */
  throughputRatio: number | null;
  /** Gateway minus baseline, ms. */
  addedP50Ms: number | null;
  addedP99Ms: number | null;
  addedTtftP50Ms: number | null;
  addedTtftP99Ms: number | null;
  /** Gateway API's CPU per request ÷ the baseline's answering process's (mock or proxy). */
  cpuPerRequestRatio: number | null;
}

/** A process's usage during a run, and its CPU per successful request in the measured window. */
export interface ProcessFigures extends ProcessUsage {
  cpuUsPerRequest: number | null;
}

export interface BenchRow extends LoadResult {
  scenario: string;
  target: Target;
  stream: boolean;
  clients: number;
  upstreamLatencyMs: number;
  chunkDelayMs: number;
  /** The large-prompt scenarios' prompt (`p32k`, `img1m`, …); null for "Hello". */
  prompt: string | null;
  /** Bytes of each request's body, the same for every target of the scenario. */
  requestBytes: number;
  warmupSec: number;
  /** The process answering the load: the mock (direct), the proxy (passthrough) or the API (gateway). */
  server: ProcessFigures | null;
  /** Gateway rows only; its CPU per request is what settling one request costs. */
  worker: ProcessFigures | null;
  /** This process: autocannon or the undici clients. */
  loadgen: ProcessFigures | null;
  /** Gateway rows: the API's longest event-loop delay in the window, ms (see event-loop-max.ts). */
  loopMaxMs: number | null;
  /** The whole machine, percent of one core (ceiling: 100 × cores). */
  hostCpuPercent: number;
  /** Connections dropped by a full accept queue during the run (host-wide kernel counter). */
  listenOverflows: number;
  /** CPU of processes other than the bench's, Postgres and Redis, during the run: someone else's load. */
  otherCpuPercent: number;
  billing: BillingBacklog | null;
  /** What the window cost Redis per request, in runs with a gateway or the metered floor (every row of them); else null. */
  redis: RedisCost | null;
  /** Only the long-stream scenario: the API's memory before, during and after its one stream. */
  memory: StreamMemory | null;
  /** Gateway rows run with --login-flood: the logins sent beside the load. */
  loginFlood?: LoginFloodResult;
  vsDirect: Comparison | null;
  vsPassthrough: Comparison | null;
}

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; cpuModel: string; memoryGb: number; freeMemoryGb: number; node: string; platform: string };
  options: Record<string, unknown>;
  rows: BenchRow[];
  /** The many-slow-streams runs side by side, and the memory of one more open stream. */
  slowStreams: SlowStreamMemory | null;
  /** The same with a 32 KB prompt in each stream: what a stream keeps of its prompt while it lasts. */
  promptSlowStreams?: SlowStreamMemory | null;
}

export function machineInfo(): BenchReport['machine'] {
  const gb = (bytes: number) => round(bytes / 1024 ** 3, 1);
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGb: gb(totalmem()),
    freeMemoryGb: gb(freemem()),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

/** Fills vsDirect / vsPassthrough on every gateway row from the baselines of the same scenario. */
export function compareToBaselines(rows: BenchRow[]): void {
  for (const row of rows.filter((r) => r.target === 'gateway')) {
    const baseline = (target: Target) => rows.find((r) => r.scenario === row.scenario && r.target === target);
    const direct = baseline('direct');
    const passthrough = baseline('passthrough');
    row.vsDirect = direct ? compare(row, direct) : null;
    row.vsPassthrough = passthrough ? compare(row, passthrough) : null;
  }
}

function compare(gateway: BenchRow, base: BenchRow): Comparison {
  const diff = (a: Percentiles | null, b: Percentiles | null, key: keyof Percentiles) =>
    a && b ? round(a[key] - b[key]) : null;
  return {
    throughputRatio: base.requestsPerSec > 0 ? round(gateway.requestsPerSec / base.requestsPerSec, 3) : null,
    addedP50Ms: diff(gateway.latencyMs, base.latencyMs, 'p50'),
    addedP99Ms: diff(gateway.latencyMs, base.latencyMs, 'p99'),
    addedTtftP50Ms: diff(gateway.ttftMs, base.ttftMs, 'p50'),
    addedTtftP99Ms: diff(gateway.ttftMs, base.ttftMs, 'p99'),
    cpuPerRequestRatio: ratio(gateway.server?.cpuUsPerRequest, base.server?.cpuUsPerRequest),
  };
}

function ratio(value: number | null | undefined, base: number | null | undefined): number | null {
  return value !== null && value !== undefined && base ? round(value / base, 2) : null;
}

const COLUMNS: [string, (row: BenchRow) => string][] = [
  ['scenario', (r) => r.scenario],
  ['target', (r) => r.target],
  ['req/s', (r) => fmt(r.requestsPerSec, 0)],
  ['p50 ms', (r) => fmt(r.latencyMs?.p50)],
  ['p99 ms', (r) => fmt(r.latencyMs?.p99)],
  ['TTFT p50', (r) => fmt(r.ttftMs?.p50)],
  ['TTFT p99', (r) => fmt(r.ttftMs?.p99)],
  ['non2xx', (r) => String(r.non2xx)],
  ['errors', (r) => String(r.errors + r.warmupFailures)],
  ['RSS MB', (r) => fmt(r.server?.peakRssMb, 0)],
  ['CPU %', (r) => fmt(r.server?.cpuPercent, 0)],
  ['CPU µs/req', (r) => fmt(r.server?.cpuUsPerRequest, 0)],
  ['host CPU %', (r) => fmt(r.hostCpuPercent, 0)],
  ['other CPU %', (r) => fmt(r.otherCpuPercent, 0)],
  ['SYN drops', (r) => String(r.listenOverflows)],
  ['worker MB', (r) => fmt(r.worker?.peakRssMb, 0)],
  ['Redis µs/req', (r) => fmt(r.redis?.cpuUsPerRequest, 0)],
  ['script µs/call', (r) => fmt(r.redis?.scriptUsPerCall, 1)],
  ['loop max ms', (r) => fmt(r.loopMaxMs, 1)],
  ['backlog', (r) => (r.billing ? `${r.billing.waiting} (${drain(r.billing.drainMs)})` : '')],
  ['×direct', (r) => fmt(r.vsDirect?.throughputRatio)],
  ['×pass', (r) => fmt(r.vsPassthrough?.throughputRatio)],
  ['×pass CPU', (r) => fmt(r.vsPassthrough?.cpuPerRequestRatio)],
  ['+p50', (r) => fmt(r.vsDirect?.addedP50Ms)],
  ['+p50 vs pass', (r) => fmt(r.vsPassthrough?.addedP50Ms)],
  ['+p99', (r) => fmt(r.vsDirect?.addedP99Ms)],
  ['+TTFT p50', (r) => fmt(r.vsDirect?.addedTtftP50Ms)],
  ['+TTFT p99', (r) => fmt(r.vsDirect?.addedTtftP99Ms)],
];

/** One row per scenario × target, as a Markdown table: readable in a terminal, pasteable into docs. */
export function formatTable(rows: BenchRow[]): string {
  const cells = [COLUMNS.map(([title]) => title), ...rows.map((row) => COLUMNS.map(([, cell]) => cell(row)))];
  const widths = COLUMNS.map((_, index) => Math.max(...cells.map((line) => line[index].length)));
  const line = (values: string[]) =>
    `| ${values.map((value, index) => (index < 2 ? value.padEnd(widths[index]) : value.padStart(widths[index]))).join(' | ')} |`;
  const rule = `|${widths.map((width, index) => (index < 2 ? `-${'-'.repeat(width)}-` : `-${'-'.repeat(width)}:`)).join('|')}|`;
  return [line(cells[0]), rule, ...cells.slice(1).map(line)].join('\n');
}

/** One line under the table: the API's peak RSS at each slow-stream count and what one more stream costs. */
export function formatSlowStreams(memory: SlowStreamMemory | null, which = ''): string {
  if (!memory) {
    return '';
  }
  const peaks = memory.runs.map((run) => `${run.clients} streams ${fmt(run.apiPeakRssMb, 0)} MB`).join(', ');
  const perStream = memory.memoryPerStreamKB === null ? '' : `; ${memory.memoryPerStreamKB} KB per open stream`;
  return `API peak RSS${which}: ${peaks}${perStream}`;
}

function fmt(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined ? '' : value.toFixed(digits);
}

function drain(ms: number | null): string {
  return ms === null ? 'not drained' : `${(ms / 1000).toFixed(1)}s`;
}

/** Writes the report to `outPath` and a copy named after the start time next to it; returns both paths. */
export function writeReport(report: BenchReport, outPath: string): string[] {
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(outPath, `${JSON.stringify(report, null, 2)}\n`);
  const copy = join(dirname(outPath), `bench-${report.startedAt.replace(/[:.]/g, '-')}.json`);
  copyFileSync(outPath, copy);
  return [outPath, copy];
}
