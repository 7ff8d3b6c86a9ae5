import { BenchOptions } from 'tools/bench/bench-options';
import { P32K_PROMPT, PROMPTS, PromptSpec } from 'tools/bench/bench-prompts';

/** Who answers: the mock itself, our bare Node proxy in front of it, or the real gateway in front of it. */
export type Target = 'direct' | 'passthrough' | 'gateway';

/** One mock upstream process; every scenario names the one it runs against. */
export interface UpstreamSpec {
  /** Also the suffix of its channel and model ids in the gateway. */
  id: string;
  latencyMs: number;
  chunkDelayMs: number;
}

export interface Scenario {
  name: string;
  stream: boolean;
  clients: number;
  upstream: UpstreamSpec;
  targets: Target[];
  /** A floor under --warmup: enough to connect every client gently and finish one stream each. */
  minWarmupSec?: number;
  /** Not a load: one long `n: 8` stream while the API's memory is sampled (see long-stream.ts). */
  longStream?: boolean;
  /** One of the many-slow-streams runs, whose API memory at each count gives the memory of a stream. */
  slowStreams?: boolean;
  /** A large user message instead of "Hello"; its id leads the name (`p32k-json-c1-up0ms`). */
  prompt?: PromptSpec;
  /**
   * The model's first route is a dead channel whose breaker is open, its second the mock: what routing
   * past an open breaker costs. `deadfirst` leads the name (`deadfirst-json-c1-up0ms`).
   */
  deadFirst?: boolean;
}

const DEAD_FIRST = 'deadfirst';

/** The prompt the second set of slow streams carries: an agent's, in tens of KB. */
const SLOW_STREAM_PROMPT = P32K_PROMPT;

/** Upstream latencies every load shape is measured against: none (pure overhead) and a short real-ish one. */
const LATENCIES_MS = [0, 50];
const CLIENT_COUNTS = [1, 50];
const ALL_TARGETS: Target[] = ['direct', 'passthrough', 'gateway'];

/**
 * The plan: non-stream (`json-…`) and stream (`sse-…`) at 1 and 50 clients against each latency,
 * then many slow streams against the gateway alone (the baselines hold open sockets trivially;
 * the question is whether the gateway's per-stream state and settlement keep up), then the same
 * requests with large prompts. Names avoid "nonstream" so that `--only sse` and `--only json` select cleanly.
 */
export function planScenarios(options: BenchOptions): Scenario[] {
  const all = options.smoke ? smokeScenarios(options) : fullScenarios(options);
  return options.only.length === 0 ? all : all.filter((s) => options.only.some((part) => selects(s, part)));
}

/**
 * Whether one `--only` part selects a scenario: the part occurs in its name, without cutting a number
 * short (`c50` does not select `c500`), and, for a large-prompt scenario, where it names the prompt
 * (`p32k`, `p256k-sse`, `img1m`): the rest of `p32k-json-c1-up0ms` is a plain scenario's whole name,
 * and `--only json-c1-up0ms` must go on selecting that one alone.
 */
export function selects(scenario: Scenario, part: string): boolean {
  const { name } = scenario;
  // Like a prompt's id, `deadfirst` must be named for its scenario to be selected.
  const lead = scenario.prompt?.id ?? (scenario.deadFirst ? DEAD_FIRST : undefined);
  for (let at = name.indexOf(part); at >= 0; at = name.indexOf(part, at + 1)) {
    const cutsNumber = /\d$/.test(part) && /\d/.test(name.charAt(at + part.length));
    const namesLead = lead === undefined || at < lead.length;
    if (!cutsNumber && namesLead) {
      return true;
    }
  }
  return false;
}

function upstreamsFor(options: BenchOptions): UpstreamSpec[] {
  return LATENCIES_MS.map((latencyMs) => ({ id: `up${latencyMs}ms`, latencyMs, chunkDelayMs: options.chunkDelayMs }));
}

/** CI: the cheapest mock, one client, both wire modes, the gateway against its reference. */
function smokeScenarios(options: BenchOptions): Scenario[] {
  const upstream = upstreamsFor(options)[0];
  return [false, true].map((stream) => ({
    name: `${stream ? 'sse' : 'json'}-c1-${upstream.id}`,
    stream,
    clients: 1,
    upstream,
    targets: ['direct', 'gateway'],
  }));
}

function fullScenarios(options: BenchOptions): Scenario[] {
  const upstreams = upstreamsFor(options);
  const scenarios: Scenario[] = [];
  for (const stream of [false, true]) {
    for (const upstream of upstreams) {
      for (const clients of CLIENT_COUNTS) {
        const name = `${stream ? 'sse' : 'json'}-c${clients}-${upstream.id}`;
        scenarios.push({ name, stream, clients, upstream, targets: ALL_TARGETS });
      }
    }
  }
  // The plain slow streams, then the same with a long prompt: RSS, once grown, is slow to shrink, so
  // these run before anything that grows it more (the prompt scenarios' 1 MB images, at fifty clients).
  scenarios.push(...slowStreamScenarios(options), ...slowStreamScenarios(options, SLOW_STREAM_PROMPT));
  // Per-stream memory must stay flat whatever the output length: one long stream, memory before and after.
  scenarios.push({
    name: 'sse-long-n8',
    stream: true,
    clients: 1,
    upstream: upstreams[0],
    targets: ['gateway'],
    longStream: true,
  });
  // Last, so that the scenarios above run in the order and on the heap they always did.
  return [...scenarios, ...promptScenarios(upstreams[0]), deadFirstScenario(upstreams[0])];
}

/**
 * The many-slow-streams runs: two counts (500, 1,000 by default) give the memory of one more open
 * stream (slow-stream-memory.ts). With `prompt`, each stream carries it: what a stream keeps of its
 * prompt while it lasts (`p32k-sse-c1000-slow100ms`).
 */
function slowStreamScenarios(options: BenchOptions, prompt?: PromptSpec): Scenario[] {
  const slow = { id: `slow${options.slowChunkDelayMs}ms`, latencyMs: 0, chunkDelayMs: options.slowChunkDelayMs };
  return options.slowClients.map((clients) => ({
    name: `${prompt ? `${prompt.id}-` : ''}sse-c${clients}-${slow.id}`,
    stream: true,
    clients,
    upstream: slow,
    targets: ['gateway'],
    slowStreams: true,
    // A thousand connects at once overflow any default accept queue (511); ramping them over two
    // seconds measures the steady state of many open streams rather than a connect storm.
    minWarmupSec: 3,
    ...(prompt && { prompt }),
  }));
}

/** json-c1-up0ms through a model whose first route's breaker is open: compare its gateway p50 with that one's. */
function deadFirstScenario(upstream: UpstreamSpec): Scenario {
  return {
    name: `${DEAD_FIRST}-json-c1-${upstream.id}`,
    stream: false,
    clients: 1,
    upstream,
    targets: ['passthrough', 'gateway'],
    deadFirst: true,
  };
}

/** Each prompt size, non-stream and stream, at 1 and 50 clients, against the instant mock, on all targets. */
function promptScenarios(upstream: UpstreamSpec): Scenario[] {
  return PROMPTS.flatMap((prompt) =>
    [false, true].flatMap((stream) =>
      CLIENT_COUNTS.map((clients) => ({
        name: `${prompt.id}-${stream ? 'sse' : 'json'}-c${clients}-${upstream.id}`,
        stream,
        clients,
        upstream,
        targets: ALL_TARGETS,
        prompt,
      })),
    ),
  );
}

export interface UpstreamNeeds {
  spec: UpstreamSpec;
  passthrough: boolean;
  gateway: boolean;
  /** The gateway also serves this mock's model behind a dead first channel. */
  deadFirst: boolean;
}

/** The distinct mocks the selected scenarios need, and which of them need a passthrough proxy or the gateway. */
export function upstreamsOf(scenarios: Scenario[]): UpstreamNeeds[] {
  const byId = new Map<string, UpstreamNeeds>();
  for (const scenario of scenarios) {
    const entry = byId.get(scenario.upstream.id) ?? {
      spec: scenario.upstream,
      passthrough: false,
      gateway: false,
      deadFirst: false,
    };
    entry.passthrough ||= scenario.targets.includes('passthrough');
    entry.gateway ||= scenario.targets.includes('gateway');
    entry.deadFirst ||= scenario.deadFirst === true;
    byId.set(scenario.upstream.id, entry);
  }
  return [...byId.values()];
}
