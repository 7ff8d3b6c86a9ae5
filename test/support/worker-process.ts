import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

/**
 * The real worker entrypoint in its own process, with `env` over the test's; resolves once it reports
 * Postgres and Redis reachable.
 */
export async function spawnWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'src/worker.ts'],
    {
      cwd: join(__dirname, '..', '..'),
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('worker ready')) {
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before it was ready:\n${output}`)));
  });
  // Loading the worker's modules through ts-node alone took 23 s on a shared 2-core machine under load.
  const timeout = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    await ready;
  } finally {
    clearTimeout(timeout);
  }
  return child;
}

/** Kills a worker process (SIGKILL unless told otherwise) and waits for it to be gone. */
export async function stopWorker(child: ChildProcess | null, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  }
}
