import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Started {
  name: string;
  pid: number;
  logFile: string;
}

interface Entry extends Started {
  child: ChildProcess;
  exited: boolean;
}

/** How long a process gets to exit on SIGTERM before SIGKILL (the API drains streams for SHUTDOWN_GRACE_MS). */
const TERM_GRACE_MS = 5_000;

/**
 * Every process the bench starts, so each can be stopped by its own PID — on success, on error,
 * on Ctrl-C. Output goes to one log file per process (not a pipe: a chatty child must never
 * block on a full pipe, nor cost the load generator CPU).
 */
export class ChildProcesses {
  private readonly entries: Entry[] = [];
  private stopping = false;

  constructor(private readonly logDir: string) {
    mkdirSync(logDir, { recursive: true });
  }

  /** Starts `node <args>`; its stdout and stderr go to `<logDir>/<name>.log`. */
  startNode(name: string, args: string[], env: NodeJS.ProcessEnv): Started {
    const logFile = join(this.logDir, `${name}.log`);
    const fd = openSync(logFile, 'w');
    try {
      const child = spawn(process.execPath, args, { env, stdio: ['ignore', fd, fd] });
      if (child.pid === undefined) {
        throw new Error(`could not start ${name}`);
      }
      const entry: Entry = { name, pid: child.pid, logFile, child, exited: false };
      child.once('exit', () => (entry.exited = true));
      // A spawn failure arrives as 'error' (and maybe no 'exit'); unhandled it would crash the bench.
      child.once('error', () => (entry.exited = true));
      this.entries.push(entry);
      return { name, pid: child.pid, logFile };
    } finally {
      closeSync(fd);
    }
  }

  /** Every PID started, live or not. */
  pids(): number[] {
    return this.entries.map((entry) => entry.pid);
  }

  /** Throws if a process died on its own: every figure after that would be wrong. */
  assertAlive(): void {
    const dead = this.entries.find((entry) => entry.exited);
    if (dead && !this.stopping) {
      const { exitCode, signalCode } = dead.child;
      // The API and worker exit 0 only after draining on SIGTERM/SIGINT: someone outside the bench stopped it.
      const hint = exitCode === 0 ? ', a clean shutdown: it was sent SIGTERM or SIGINT from outside the bench' : '';
      throw new Error(`${dead.name} (pid ${dead.pid}) exited (${signalCode ?? exitCode}${hint}); see ${dead.logFile}`);
    }
  }

  /** SIGTERM to each live process by PID, then SIGKILL to any still there after the grace period. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    const live = this.entries.filter((entry) => !entry.exited);
    for (const entry of live) {
      signal(entry.pid, 'SIGTERM');
    }
    const deadline = Date.now() + TERM_GRACE_MS;
    while (live.some((entry) => !entry.exited) && Date.now() < deadline) {
      await sleep(50);
    }
    for (const entry of live.filter((e) => !e.exited)) {
      signal(entry.pid, 'SIGKILL');
    }
  }

  /** Polls `url` until it answers 2xx; fails early if `started` has exited, or after `timeoutMs`. */
  async waitForHttp(started: Started, url: string, init: RequestInit = {}, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      this.assertAlive();
      const ok = await fetch(url, { ...init, signal: AbortSignal.timeout(2_000) }).then(
        async (response) => {
          await response.arrayBuffer();
          return response.ok;
        },
        () => false,
      );
      if (ok) {
        return;
      }
      await sleep(100);
    }
    throw new Error(`${started.name} did not answer at ${url} within ${timeoutMs} ms; see ${started.logFile}`);
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone (ESRCH): nothing to stop.
  }
}

/** A port that was free a moment ago: bound on 0 and released. Children then bind it themselves. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
