import { setTimeout as sleep } from 'node:timers/promises';
import { BenchEnvironment, Endpoint, startEnvironment } from 'tools/bench/bench-environment';
import { BenchOptions } from 'tools/bench/bench-options';
import { BillingBacklogProbe } from 'tools/bench/billing-backlog';
import { ChildProcesses } from 'tools/bench/child-processes';
import { acquireBenchLock, BENCH_REDIS_URL, benchModelId } from 'tools/bench/gateway-setup';
import { runJsonLoad } from 'tools/bench/json-load';
import { EventLoopMaxProbe } from 'tools/bench/event-loop-max';
import { RedisCostProbe } from 'tools/bench/redis-cost';
import { LoadResult, LoadTarget, WindowMarks } from 'tools/bench/load-result';
import { LoginFloodResult, startLoginFlood } from 'tools/bench/login-flood';
import { cpuPerRequestUs, ProcessSampler, ProcessUsage, SampledUsage } from 'tools/bench/process-sampler';
import { BenchReport, BenchRow, compareToBaselines, machineInfo, ProcessFigures } from 'tools/bench/report';
import { planScenarios, Scenario, Target } from 'tools/bench/scenarios';
import { slowStreamMemory, SlowStreamMemory } from 'tools/bench/slow-stream-memory';
import { runStreamLoad } from 'tools/bench/stream-load';
import { runLongStream, StreamMemory } from 'tools/bench/long-stream';
import { userContent } from 'tools/bench/bench-prompts';

/** How long settlement may take to catch up after a gateway run before the next run starts anyway. */
const DRAIN_LIMIT_MS = 60_000;
/** Quiet pause before each run: sockets of the last run close, processes collect garbage. */
const QUIET_MS = 1_000;
/** CI wants its answer in seconds and ignores timings anyway. */
const SMOKE_QUIET_MS = 200;
/** CPU of processes not ours (percent of one core) above which a run's figures are flagged as disturbed. */
const OTHER_CPU_WARN_PERCENT = 20;
/** Budget for starting everything (database, migrations, processes, seeding). */
const SETUP_BUDGET_SEC = 120;

/** What a run reads besides its processes: settlement's backlog (gateway) and Redis's own cost. */
interface Probes {
  billing?: BillingBacklogProbe;
  redis?: RedisCostProbe;
}

/** The overall limit when --timeout is not given: generous, so that it only ever stops a hang. */
export function overallTimeoutSec(options: BenchOptions): number {
  const runs = planScenarios(options).reduce((sum, scenario) => sum + scenario.targets.length, 0);
  return options.timeoutSec ?? SETUP_BUDGET_SEC + runs * (options.warmupSec + options.durationSec + 45);
}

/** Starts the environment, runs every selected scenario against each of its targets in turn, and reports. */
export async function runBench(
  options: BenchOptions,
  children: ChildProcesses,
  log: (line: string) => void,
): Promise<BenchReport> {
  const startedAt = new Date().toISOString();
  const scenarios = planScenarios(options);
  if (scenarios.length === 0) {
    throw new Error(`--only ${options.only.join(',')} matches no scenario`);
  }
  const usesGateway = scenarios.some((scenario) => scenario.targets.includes('gateway'));
  const releaseLock = usesGateway ? await acquireBenchLock() : undefined;
  const probes: Probes = {};
  try {
    const environment = await startEnvironment(scenarios, children, log);
    if (environment.gateway) {
      probes.billing = new BillingBacklogProbe(BENCH_REDIS_URL);
    }
    if (environment.gateway || process.env.BENCH_PASSTHROUGH_METERED === '1') {
      probes.redis = new RedisCostProbe(BENCH_REDIS_URL);
    }
    const rows: BenchRow[] = [];
    for (const scenario of scenarios) {
      for (const target of scenario.targets) {
        await sleep(options.smoke ? SMOKE_QUIET_MS : QUIET_MS);
        log(`${scenario.name} → ${target}: ${scenario.clients} client(s), ${options.durationSec}s`);
        const row = await runOne(scenario, target, environment, options, children, probes);
        log(`  ${row.requestsPerSec} req/s, p50 ${row.latencyMs?.p50 ?? '-'} ms, failures ${failures(row)}`);
        if (row.memory) {
          log(`  API memory around one long stream: ${JSON.stringify(row.memory)}`);
        }
        if (row.loginFlood) {
          const { loginsPerSec, statusCodes } = row.loginFlood;
          log(`  login flood beside it: ${loginsPerSec} logins/s, answers ${JSON.stringify(statusCodes)}`);
        }
        if (row.otherCpuPercent > OTHER_CPU_WARN_PERCENT) {
          log(`  warning: processes outside the bench used ${row.otherCpuPercent}% CPU meanwhile; figures are skewed`);
        }
        rows.push(row);
      }
    }
    compareToBaselines(rows);
    return {
      startedAt,
      finishedAt: new Date().toISOString(),
      machine: machineInfo(),
      options: { ...options },
      rows,
      slowStreams: slowStreamsOf(scenarios, rows, false),
      promptSlowStreams: slowStreamsOf(scenarios, rows, true),
    };
  } finally {
    await probes.billing?.close();
    await probes.redis?.quit();
    await releaseLock?.();
  }
}

/** The many-slow-streams runs that ran, with or without a large prompt, side by side; null if none did. */
function slowStreamsOf(scenarios: Scenario[], rows: BenchRow[], withPrompt: boolean): SlowStreamMemory | null {
  const slow = new Set(
    scenarios
      .filter((scenario) => scenario.slowStreams && (scenario.prompt !== undefined) === withPrompt)
      .map((scenario) => scenario.name),
  );
  const runs = rows
    .filter((row) => slow.has(row.scenario) && row.target === 'gateway')
    .map((row) => ({
      scenario: row.scenario,
      clients: row.clients,
      apiPeakRssMb: row.server?.peakRssMb ?? null,
      workerPeakRssMb: row.worker?.peakRssMb ?? null,
    }));
  return runs.length === 0 ? null : slowStreamMemory(runs);
}

export function failures(row: BenchRow): number {
  return row.non2xx + row.errors + row.warmupFailures;
}

async function runOne(
  scenario: Scenario,
  target: Target,
  environment: BenchEnvironment,
  options: BenchOptions,
  children: ChildProcesses,
  { billing: billingProbe, redis: redisProbe }: Probes,
): Promise<BenchRow> {
  const { endpoint, apiKey } = resolveTarget(environment, scenario, target);
  const load: LoadTarget = {
    origin: endpoint.origin,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({
      model: benchModelId(scenario.upstream.id, scenario.deadFirst),
      messages: [{ role: 'user', content: userContent(scenario.prompt) }],
      max_tokens: 64,
      ...(scenario.stream ? { stream: true } : {}),
    }),
  };
  const workerPid = target === 'gateway' ? environment.gateway?.workerPid : undefined;
  const named = { server: endpoint.pid, loadgen: process.pid, ...(workerPid ? { worker: workerPid } : {}) };
  const sampler = new ProcessSampler(named, new Set([process.pid, ...children.pids()]));
  // The long stream samples /metrics itself, which resets the event-loop maximum every 100 ms.
  const loopProbe = target === 'gateway' && !scenario.longStream ? new EventLoopMaxProbe(endpoint.origin) : null;
  const marks: WindowMarks = {
    open: () => {
      sampler.markWindowOpen();
      loopProbe?.open();
      redisProbe?.open();
    },
    close: () => {
      sampler.markWindowClose();
      loopProbe?.close();
      redisProbe?.close();
    },
  };
  const run = scenario.stream ? runStreamLoad : runJsonLoad;
  const warmupSec = scenario.longStream ? 0 : Math.max(options.warmupSec, scenario.minWarmupSec ?? 0);
  const flood =
    target === 'gateway' && options.loginFlood > 0 ? startLoginFlood(endpoint.origin, options.loginFlood) : null;
  let usage: SampledUsage;
  let result: LoadResult;
  let memory: StreamMemory | null = null;
  let loginFlood: LoginFloodResult | undefined;
  try {
    if (scenario.longStream) {
      ({ result, memory } = await runLongStream(load, endpoint.pid, marks));
    } else {
      result = await run(load, scenario.clients, warmupSec, options.durationSec, marks);
    }
  } finally {
    usage = sampler.stop();
    loginFlood = await flood?.stop();
  }
  children.assertAlive();
  const figures = (sampled: ProcessUsage | undefined): ProcessFigures | null =>
    sampled ? { ...sampled, cpuUsPerRequest: cpuPerRequestUs(sampled.windowCpuSec, result.requests) } : null;
  return {
    scenario: scenario.name,
    target,
    stream: scenario.stream,
    clients: scenario.clients,
    upstreamLatencyMs: scenario.upstream.latencyMs,
    chunkDelayMs: scenario.upstream.chunkDelayMs,
    prompt: scenario.prompt?.id ?? null,
    requestBytes: Buffer.byteLength(load.body),
    warmupSec,
    ...result,
    server: figures(usage.processes.server),
    worker: figures(usage.processes.worker),
    loadgen: figures(usage.processes.loadgen),
    loopMaxMs: (await loopProbe?.windowMaxMs()) ?? null,
    hostCpuPercent: usage.hostCpuPercent,
    otherCpuPercent: usage.otherCpuPercent,
    listenOverflows: usage.listenOverflows,
    memory,
    // Read right after the run: what settlement still owes at that moment, then how long it takes to catch up.
    redis: (await redisProbe?.windowCost(result.requests)) ?? null,
    billing: target === 'gateway' && billingProbe ? await billingProbe.measure(DRAIN_LIMIT_MS) : null,
    loginFlood,
    vsDirect: null,
    vsPassthrough: null,
  };
}

function resolveTarget(
  environment: BenchEnvironment,
  scenario: Scenario,
  target: Target,
): { endpoint: Endpoint; apiKey: string } {
  const upstream = environment.upstreams.get(scenario.upstream.id);
  // The mock accepts any bearer token; sending the gateway's key everywhere keeps requests byte-identical.
  const apiKey = environment.gateway?.apiKey ?? 'sk-bench';
  const endpoint =
    target === 'gateway'
      ? environment.gateway?.api
      : target === 'passthrough'
        ? upstream?.passthrough
        : upstream?.direct;
  if (!endpoint) {
    throw new Error(`no ${target} endpoint was started for ${scenario.name}`);
  }
  return { endpoint, apiKey };
}
