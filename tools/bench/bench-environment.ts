import { join } from 'node:path';
import { API_NODE_FLAGS } from 'src/config/api-runtime';
import { ChildProcesses, freePort, Started } from 'tools/bench/child-processes';
import {
  BENCH_DATABASE_URL,
  BENCH_REDIS_URL,
  flushBenchRedis,
  GatewayUpstream,
  gatewayEnv,
  recreateDatabase,
  seedGateway,
} from 'tools/bench/gateway-setup';
import { Scenario, upstreamsOf } from 'tools/bench/scenarios';
import { PRODUCT_DIST } from 'tools/product-dist';

/** A process answering load, and where. */
export interface Endpoint {
  origin: string;
  pid: number;
}

export interface BenchEnvironment {
  /** Per mock id: the mock itself and, when some scenario wants it, the passthrough proxy in front of it. */
  upstreams: Map<string, { direct: Endpoint; passthrough?: Endpoint }>;
  gateway?: { api: Endpoint; workerPid: number; apiKey: string };
}

// Compiled layout: this file is dist-tools/tools/bench/bench-environment.js.
const TOOLS_DIST = join(__dirname, '..');
const UPSTREAM_PROBE = { headers: { authorization: 'Bearer probe' } };

/** Starts only what the selected scenarios need: their mocks, proxies, and (if any wants it) the gateway. */
export async function startEnvironment(
  scenarios: Scenario[],
  children: ChildProcesses,
  log: (line: string) => void,
): Promise<BenchEnvironment> {
  const environment: BenchEnvironment = { upstreams: new Map() };
  const behindGateway: GatewayUpstream[] = [];
  for (const { spec, passthrough, gateway, deadFirst } of upstreamsOf(scenarios)) {
    const port = await freePort();
    const script = join(TOOLS_DIST, 'bin', 'mock-upstream.js');
    const args = [
      '--port',
      String(port),
      '--latency-ms',
      String(spec.latencyMs),
      '--chunk-delay-ms',
      String(spec.chunkDelayMs),
      // Kept requests are for tests; a thousand megabyte prompts would cost the mock their memory and GC.
      '--record-requests',
      '0',
    ];
    const mock = children.startNode(`mock-${spec.id}`, [script, ...args], process.env);
    const direct = { origin: `http://127.0.0.1:${port}`, pid: mock.pid };
    await children.waitForHttp(mock, `${direct.origin}/v1/models`, UPSTREAM_PROBE);
    environment.upstreams.set(spec.id, {
      direct,
      passthrough: passthrough ? await startProxy(children, spec.id, direct.origin) : undefined,
    });
    if (gateway) {
      behindGateway.push({ id: spec.id, origin: direct.origin, deadFirst });
    }
    log(`mock ${spec.id} (latency ${spec.latencyMs} ms, chunk delay ${spec.chunkDelayMs} ms) at ${direct.origin}`);
  }
  if (behindGateway.length > 0) {
    environment.gateway = await startGateway(children, behindGateway, log);
  }
  return environment;
}

async function startProxy(children: ChildProcesses, id: string, target: string): Promise<Endpoint> {
  const port = await freePort();
  // As BENCH_GATEWAY_NODE_ARGS does for the gateway: a profile of the reference, under the same load.
  const nodeArgs = (process.env.BENCH_PASSTHROUGH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = [...nodeArgs, join(__dirname, 'passthrough-proxy.main.js'), '--port', String(port), '--target', target];
  if (process.env.BENCH_PASSTHROUGH_METERED === '1') {
    // The passthrough rows measure the metered floor instead (metered-floor-proxy.ts); own keys, own db.
    args.push('--metered-redis', BENCH_REDIS_URL);
  }
  const proxy = children.startNode(`passthrough-${id}`, args, process.env);
  const endpoint = { origin: `http://127.0.0.1:${port}`, pid: proxy.pid };
  await children.waitForHttp(proxy, `${endpoint.origin}/v1/models`, UPSTREAM_PROBE);
  return endpoint;
}

/** A fresh database and Redis db, the API and the worker as deployed, then catalog, account and key. */
async function startGateway(
  children: ChildProcesses,
  upstreams: GatewayUpstream[],
  log: (line: string) => void,
): Promise<BenchEnvironment['gateway']> {
  const applied = await recreateDatabase();
  await flushBenchRedis();
  log(
    `database ${new URL(BENCH_DATABASE_URL).pathname.slice(1)} recreated (${applied} migrations), ${BENCH_REDIS_URL} flushed`,
  );
  const port = await freePort();
  const { env, adminToken } = gatewayEnv(port);
  // For profiling the gateway alone, e.g. BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
  const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const apiArgs = [...API_NODE_FLAGS, ...nodeArgs, join(PRODUCT_DIST, 'main.js')];
  const api: Started = children.startNode('gateway-api', apiArgs, env);
  const worker = children.startNode('gateway-worker', [...nodeArgs, join(PRODUCT_DIST, 'worker.js')], env);
  const origin = `http://127.0.0.1:${port}`;
  await children.waitForHttp(api, `${origin}/health/ready`, {}, 60_000);
  const apiKey = await seedGateway(origin, adminToken, upstreams);
  log(`gateway at ${origin} (api pid ${api.pid}, worker pid ${worker.pid}), seeded ${upstreams.length} channel(s)`);
  return { api: { origin, pid: api.pid }, workerPid: worker.pid, apiKey };
}
