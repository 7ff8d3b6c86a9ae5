import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from 'test/support/free-port';

const run = promisify(execFile);
const REDIS_SERVER = process.env.TEST_REDIS_SERVER ?? 'redis-server';
const REDIS_CLI = process.env.TEST_REDIS_CLI ?? 'redis-cli';
const READY_WITHIN_MS = 30_000;

/** A Redis Cluster of local masters (no replicas, no persistence), made for one test run. */
export interface LocalRedisCluster {
  /** `127.0.0.1:port` of every master. */
  nodes: string[];
  /** REDIS_URL naming it: `redis-cluster://127.0.0.1:p1,127.0.0.1:p2,…`. */
  url: string;
  /** Stops every server and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts `masters` redis-servers in cluster mode on free local ports, each in a directory of the
 * run's own, joins them into one cluster (every slot assigned) and waits until every node says
 * cluster_state:ok.
 */
export async function startRedisCluster(masters = 3): Promise<LocalRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-cluster-'));
  const servers: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => stopServer(server)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let index = 0; index < masters; index++) {
      const port = await freePort();
      ports.push(port);
      servers.push(startServer(port, dir));
    }
    const nodes = ports.map((port) => `127.0.0.1:${port}`);
    await Promise.all(ports.map((port) => until(port, async () => (await cli(port, 'ping')) === 'PONG')));
    await run(REDIS_CLI, ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes']);
    await Promise.all(
      ports.map((port) => until(port, async () => (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'))),
    );
    return { nodes, url: `redis-cluster://${nodes.join(',')}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function startServer(port: number, dir: string): ChildProcess {
  // Each node's state file in the run's directory: nodes of other runs (or of a dead one) are never met.
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    `nodes-${port}.conf`,
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--dir',
    dir,
  ];
  return spawn(REDIS_SERVER, args, { stdio: 'ignore' });
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) {
    return;
  }
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  // Unref'd: a server that stops at once must not keep the test run alive for the rest of the wait.
  const stubborn = setTimeout(() => server.kill('SIGKILL'), 5_000).unref();
  await exited;
  clearTimeout(stubborn);
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run(REDIS_CLI, ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout.trim();
}

async function until(port: number, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    if (await ready().catch(() => false)) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`redis-server on port ${port} was not ready within ${READY_WITHIN_MS} ms`);
    }
    await sleep(100);
  }
}
