import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatPairs, pairReports } from 'tools/bench/paired-runs';
import { BenchReport } from 'tools/bench/report';

const USAGE = `usage: node dist-tools/tools/bin/bench-pairs.js --base DIR [--pairs N] [--out DIR] -- BENCH_ARGS

Runs the bench alternately on another checkout (DIR, built with npm run build && npm run build:tools)
and on this one, base first in each pair, then prints every run's req/s and CPU per request side by side
with the median CPU change. On a noisy host one gateway process can sit 30 % from the next on the same
build, so judge a change by several pairs, not by one run. Example:
  node dist-tools/tools/bin/bench-pairs.js --base ../base --pairs 3 -- --only json-c50-up0ms --duration 6
`;

interface PairsOptions {
  baseDir: string;
  pairs: number;
  outDir: string;
  benchArgs: string[];
}

function parseArgs(argv: string[]): PairsOptions {
  const split = argv.indexOf('--');
  const own = split < 0 ? argv : argv.slice(0, split);
  const benchArgs = split < 0 ? [] : argv.slice(split + 1);
  const value = (flag: string) => {
    const at = own.indexOf(flag);
    return at < 0 ? undefined : own[at + 1];
  };
  const baseDir = value('--base');
  const pairs = Number(value('--pairs') ?? 3);
  if (!baseDir || !Number.isInteger(pairs) || pairs < 1 || benchArgs.includes('--out')) {
    throw new Error(USAGE);
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    baseDir: resolve(baseDir),
    pairs,
    outDir: resolve(value('--out') ?? join('bench-results', `pairs-${stamp}`)),
    benchArgs,
  };
}

/** One bench run of the build whose bench.js this is; its progress goes to `logPath`, its report is read back. */
function runBench(benchJs: string, args: string[], reportPath: string, logPath: string): Promise<BenchReport> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [benchJs, ...args, '--out', reportPath], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.pipe(createWriteStream(logPath));
    child.on('error', fail);
    child.on('exit', (code) =>
      code === 0
        ? done(JSON.parse(readFileSync(reportPath, 'utf8')) as BenchReport)
        : fail(new Error(`${benchJs} exited with ${code}; see ${logPath}`)),
    );
  });
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const sides = {
    base: join(options.baseDir, 'dist-tools', 'tools', 'bin', 'bench.js'),
    head: join(__dirname, 'bench.js'),
  };
  for (const benchJs of Object.values(sides)) {
    if (!existsSync(benchJs)) {
      throw new Error(`${benchJs} is missing: build that checkout first (npm run build && npm run build:tools)`);
    }
  }
  mkdirSync(options.outDir, { recursive: true });
  const reports: Record<keyof typeof sides, BenchReport[]> = { base: [], head: [] };
  for (let pair = 1; pair <= options.pairs; pair++) {
    for (const side of ['base', 'head'] as const) {
      process.stderr.write(`pair ${pair} of ${options.pairs}: ${side}\n`);
      const name = `${side}-${pair}`;
      const report = await runBench(
        sides[side],
        options.benchArgs,
        join(options.outDir, `${name}.json`),
        join(options.outDir, `${name}.log`),
      );
      reports[side].push(report);
    }
  }
  const paired = pairReports(reports.base, reports.head);
  writeFileSync(join(options.outDir, 'pairs.json'), `${JSON.stringify(paired, null, 2)}\n`);
  process.stdout.write(`\n${formatPairs(paired)}\n\nwritten: ${options.outDir}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
