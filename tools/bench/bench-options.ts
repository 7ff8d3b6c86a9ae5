import { join } from 'node:path';

/** Everything `npm run bench` can be told on its command line. */
export interface BenchOptions {
  /** Measured seconds per scenario × target. */
  durationSec: number;
  /** Seconds of load before each measurement, discarded (JIT, pools, caches). */
  warmupSec: number;
  /** Comma-separated substrings; a scenario runs when its name contains one of them. */
  only: string[];
  /** CI mode: a few seconds, direct + gateway only, non-zero exit on any failed request. */
  smoke: boolean;
  /** The JSON report; a timestamped copy is written next to it. */
  outPath: string;
  /** Pause between SSE events of the 0 ms / 50 ms mocks. */
  chunkDelayMs: number;
  /** Pause between SSE events of the mock behind the many-slow-streams scenario. */
  slowChunkDelayMs: number;
  /** Concurrent clients of each many-slow-streams run, in the order they run. */
  slowClients: number[];
  /** Hard limit for the whole run; undefined: derived from the plan. */
  timeoutSec: number | undefined;
  /** Concurrent console logins hammering the gateway during each of its runs; 0: none. */
  loginFlood: number;
}

export const USAGE = `Usage: node dist-tools/tools/bin/bench.js [options]

  --duration N              measured seconds per scenario and target (default 10; --smoke: 1)
  --warmup N                discarded warm-up seconds before each measurement (default 1; --smoke: 0.25)
  --only a,b                run only scenarios whose name contains one of these substrings
  --smoke                   CI check: direct + gateway, 1 client, non-stream and stream; exit 1 on any failure
  --out PATH                JSON report path (default bench-results/latest.json; a timestamped copy goes next to it)
  --chunk-delay-ms N        pause between SSE events of the 0 ms and 50 ms mocks (default 0)
  --slow-chunk-delay-ms N   pause between SSE events in the many-slow-streams scenario (default 100)
  --slow-clients N,M        concurrent streams of each many-slow-streams run (default 500,1000)
  --timeout N               abort the whole run after N seconds (default: derived from the plan)
  --login-flood N           N concurrent wrong-password logins against the gateway during its runs (default 0);
                            the API's own env applies, e.g. AUTH_ATTEMPTS_PER_IP, PASSWORD_HASH_CONCURRENCY
`;

/** Thrown for a bad command line; the entrypoint prints it with the usage text. */
export class UsageError extends Error {}

const VALUE_FLAGS = new Set([
  '--duration',
  '--warmup',
  '--only',
  '--out',
  '--chunk-delay-ms',
  '--slow-chunk-delay-ms',
  '--slow-clients',
  '--timeout',
  '--login-flood',
]);

export function parseBenchArgs(argv: string[], cwd: string = process.cwd()): BenchOptions {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (VALUE_FLAGS.has(name)) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++index];
      if (value === undefined) {
        throw new UsageError(`${name} needs a value`);
      }
      values.set(name, value);
    } else if (name === '--smoke' || name === '--help' || name === '-h') {
      switches.add(name === '-h' ? '--help' : name);
    } else {
      throw new UsageError(`unknown argument "${arg}"`);
    }
  }
  if (switches.has('--help')) {
    throw new UsageError('');
  }
  const smoke = switches.has('--smoke');
  const timeout = values.get('--timeout');
  return {
    durationSec: readNumber(values, '--duration', smoke ? 1 : 10, 0.1),
    warmupSec: readNumber(values, '--warmup', smoke ? 0.25 : 1, 0),
    only: (values.get('--only') ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== ''),
    smoke,
    outPath: values.get('--out') ?? join(cwd, 'bench-results', 'latest.json'),
    chunkDelayMs: readNumber(values, '--chunk-delay-ms', 0, 0),
    slowChunkDelayMs: readNumber(values, '--slow-chunk-delay-ms', 100, 0),
    slowClients: readCounts(values, '--slow-clients', [500, 1000]),
    timeoutSec: timeout === undefined ? undefined : readNumber(values, '--timeout', 0, 1),
    loginFlood: Math.round(readNumber(values, '--login-flood', 0, 0)),
  };
}

/** A comma-separated list of distinct whole numbers ≥ 1, kept in the order given. */
function readCounts(values: Map<string, string>, name: string, fallback: number[]): number[] {
  const raw = values.get(name);
  if (raw === undefined) {
    return fallback;
  }
  const counts = raw.split(',').map((part) => Number(part.trim()));
  if (raw.trim() === '' || counts.some((count) => !Number.isInteger(count) || count < 1)) {
    throw new UsageError(`${name} expects whole numbers ≥ 1 separated by commas, got "${raw}"`);
  }
  if (new Set(counts).size !== counts.length) {
    throw new UsageError(`${name} lists a number twice: "${raw}"`);
  }
  return counts;
}

function readNumber(values: Map<string, string>, name: string, fallback: number, min: number): number {
  const raw = values.get(name);
  if (raw === undefined) {
    return fallback;
  }
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min) {
    throw new UsageError(`${name} expects a number ≥ ${min}, got "${raw}"`);
  }
  return value;
}
