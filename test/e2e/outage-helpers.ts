import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server, Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Outages the billing suites cause without touching the machine's shared Postgres or Redis: a TCP
 * proxy of the test's own in front of a server (cut = the server is unreachable, connections
 * refused and open ones reset), and a Redis server of the test's own that can be SIGKILLed.
 */

/** A TCP proxy on 127.0.0.1 to `targetPort`; cut() makes the target unreachable until restore(). */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private server: Server | null = null;

  private constructor(
    private readonly targetPort: number,
    public port: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort, 0);
    await proxy.restore();
    return proxy;
  }

  /** Resets every open connection and refuses new ones, as a server that went down. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) {
      socket.destroy();
    }
    this.sockets.clear();
    if (server) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  close(): Promise<void> {
    return this.cut();
  }
}

/** `url` with its host and port replaced by the proxy's (for DATABASE_URL, REDIS_URL). */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(proxy.port);
  return parsed.toString();
}

/** The arguments docker/compose.yaml runs Redis with (after 'redis-server'). */
export function composeRedisArgs(): string[] {
  const compose = readFileSync(join(__dirname, '..', '..', 'docker', 'compose.yaml'), 'utf8');
  const line = /^\s*command:\s*(\[\s*'redis-server'.*\])\s*$/m.exec(compose);
  if (!line) {
    throw new Error("docker/compose.yaml runs no 'redis-server' command");
  }
  return (JSON.parse(line[1].replace(/'/g, '"')) as string[]).slice(1);
}

/** A redis-server of the test's own on a free 127.0.0.1 port, with its data in a temp dir. */
export class OwnRedis {
  private process: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly args: string[],
  ) {}

  static async start(args: string[]): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort(), mkdtempSync(join(tmpdir(), 'gw-redis-')), args);
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  /** Starts it (again) from what is in its directory. */
  async restart(dir = this.dir, extraArgs: string[] = []): Promise<void> {
    const child = spawn(
      'redis-server',
      [...this.args, '--port', String(this.port), '--bind', '127.0.0.1', '--dir', dir, ...extraArgs],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timeout = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 20_000);
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timeout);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timeout);
        reject(new Error(`redis-server exited with ${code}:\n${output}`));
      });
    });
    child.stdout.removeAllListeners('data');
    child.stdout.resume();
    child.removeAllListeners('exit');
    this.process = child;
  }

  async kill(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }

  async close(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
