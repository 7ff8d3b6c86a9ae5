import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { freePort } from 'test/support/free-port';

// Debian installs it in /usr/sbin, which a non-root user's PATH may lack.
const PGBOUNCER =
  process.env.TEST_PGBOUNCER ?? (existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : 'pgbouncer');
const READY_WITHIN_MS = 15_000;

/** A PgBouncer of the run's own, in transaction mode, in front of the test server. */
export interface LocalPgBouncer {
  port: number;
  /** `url` with its host and port replaced by PgBouncer's. */
  urlFor(url: string): string;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts pgbouncer with a config of its own in a fresh directory, on a free local port, pooling in
 * transaction mode: a server connection serves a client for one transaction, as in production behind
 * a pooler. `statement_timeout` is dropped from the clients' startup parameters (PgBouncer refuses
 * any it does not know): behind it the bound is the database's own setting (docs/operations.md).
 * The server (host, port, user) is `serverUrl`'s; its authentication must be trust.
 */
export async function startPgBouncer(serverUrl: string): Promise<LocalPgBouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username) || 'postgres';
  const dir = mkdtempSync(join(tmpdir(), 'gateway-pgbouncer-'));
  const port = await freePort();
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      // Fewer server connections than the API's and the workers' pools together, as in production.
      'default_pool_size = 30',
      'max_client_conn = 1000',
      'ignore_startup_parameters = statement_timeout',
      // PgBouncer refuses to run as root; as root it drops to this user once it has read its files.
      ...(userInfo().uid === 0 ? ['user = nobody'] : []),
    ].join('\n'),
  );
  chmodSync(dir, 0o755);
  const child = spawn(PGBOUNCER, [join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000)));
  const stop = async () => {
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const urlFor = (url: string) => {
    const through = new URL(url);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    return through.toString();
  };
  try {
    await waitUntilServing(urlFor(serverUrl), child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, urlFor, stop };
}

async function waitUntilServing(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`pgbouncer exited (is Debian's pgbouncer package installed?): ${output()}`);
    }
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(
          `pgbouncer did not serve within ${READY_WITHIN_MS} ms: ${(error as Error).message} ${output()}`,
        );
      }
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(100);
  }
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    // SIGINT: PgBouncer's "safe shutdown" waits for every client to leave; SIGTERM closes them at once.
    child.kill('SIGTERM');
    await exited;
  }
}
