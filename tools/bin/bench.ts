import 'reflect-metadata';
import { dirname, join } from 'node:path';
import { parseBenchArgs, USAGE, UsageError } from 'tools/bench/bench-options';
import { ChildProcesses } from 'tools/bench/child-processes';
import { formatSlowStreams, formatTable, writeReport } from 'tools/bench/report';
import { failures, overallTimeoutSec, runBench } from 'tools/bench/run-bench';

/** Set once a signal or the timeout took over the shutdown; main's own ending then stays out of its way. */
let exiting = false;

/**
 * `npm run bench`: the gateway's added latency and throughput against calling the mock upstream
 * directly and through a bare Node proxy. See docs/performance.md. Progress goes to stderr, the
 * table to stdout. Every process it starts is stopped by PID on exit, error, Ctrl-C or timeout.
 */
async function main(): Promise<number> {
  const options = parseBenchArgs(process.argv.slice(2));
  const children = new ChildProcesses(join(dirname(options.outPath), 'logs'));
  const abort = (reason: string, code: number): void => {
    if (exiting) {
      return;
    }
    exiting = true;
    process.stderr.write(`bench: ${reason}; stopping its processes\n`);
    void children.stopAll().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => abort('interrupted', 130));
  process.once('SIGTERM', () => abort('terminated', 143));
  const timeoutSec = overallTimeoutSec(options);
  const timer = setTimeout(() => abort(`overall timeout of ${timeoutSec}s reached`, 124), timeoutSec * 1000);

  try {
    const report = await runBench(options, children, (line) => process.stderr.write(`${line}\n`));
    const written = writeReport(report, options.outPath);
    const slowStreams = [
      formatSlowStreams(report.slowStreams),
      formatSlowStreams(report.promptSlowStreams ?? null, ', each stream with a 32 KB prompt'),
    ]
      .filter(Boolean)
      .map((line) => `${line}\n`)
      .join('');
    process.stdout.write(`\n${formatTable(report.rows)}\n\n${slowStreams}written: ${written.join(', ')}\n`);
    if (!options.smoke) {
      return 0;
    }
    // CI: no timing thresholds (shared runners are noisy), only that everything answered, and correctly.
    const bad = report.rows.filter((row) => failures(row) > 0 || row.requests === 0);
    for (const row of bad) {
      const codes = JSON.stringify(row.statusCodes);
      process.stderr.write(
        `smoke: ${row.scenario} → ${row.target}: ${row.requests} ok, ${row.non2xx} non-2xx ${codes}, ${row.errors + row.warmupFailures} errors\n`,
      );
    }
    return bad.length === 0 ? 0 : 1;
  } finally {
    clearTimeout(timer);
    if (!exiting) {
      await children.stopAll();
    }
  }
}

main().then(
  (code) => exiting || process.exit(code),
  (error: unknown) => {
    if (exiting) {
      return;
    }
    if (error instanceof UsageError && !error.message) {
      process.stdout.write(USAGE);
      process.exit(0);
    }
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
