import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { ENTRYPOINTS_VARIABLE } from 'test/support/entrypoint-build';

const ROOT = join(__dirname, '..', '..');

/** A file of src/ the product runs as a process of its own: the API, the worker, or a command of src/bin/. */
export type Entrypoint = 'main' | 'worker' | `bin/${string}`;

export interface EntrypointProcess {
  child: ChildProcess;
  /** Its stdout and stderr so far, interleaved, for failure messages and log assertions. */
  output(): string;
  /** Its stdout alone (the JSON log lines). */
  stdout(): string;
  /** Its stderr alone. */
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/**
 * The one way the tests start a real entrypoint in its own process: `node <entrypoint>.js` from the
 * run's compiled copy of src/ (the global setup's buildEntrypoints), as production runs dist/, in the
 * checkout's directory with `env` over the test's environment. Its output is collected, not shown.
 */
export function spawnEntrypoint(
  entrypoint: Entrypoint,
  env: Record<string, string> = {},
  args: string[] = [],
): EntrypointProcess {
  const child = spawn(process.execPath, [entrypointFile(entrypoint), ...args], {
    cwd: ROOT,
    // The compiled files live outside the checkout: their packages are found through NODE_PATH.
    env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, stdout: () => stdout, stderr: () => stderr, exited };
}

/**
 * Resolves once the process printed `line` on stdout; rejects with its output if it exits first or
 * has not printed it within `timeoutMs` (then it is killed).
 */
export async function untilPrinted(running: EntrypointProcess, line: string, timeoutMs = 60_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onData: (() => void) | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      onData = () => running.stdout().includes(line) && resolve();
      running.child.stdout!.on('data', onData);
      onData();
      void running.exited.then((code) =>
        reject(new Error(`${running.child.spawnargs[1]} exited with ${code} before "${line}":\n${running.output()}`)),
      );
      timer = setTimeout(() => {
        running.child.kill('SIGKILL');
        reject(new Error(`no "${line}" within ${timeoutMs} ms:\n${running.output()}`));
      }, timeoutMs);
    });
  } finally {
    clearTimeout(timer);
    if (onData) {
      running.child.stdout!.off('data', onData);
    }
  }
}

/** Kills the process (SIGKILL unless told otherwise) if it still runs, and waits for it to be gone. */
export async function stopEntrypoint(
  child: ChildProcess | null | undefined,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<void> {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}

function entrypointFile(entrypoint: Entrypoint): string {
  const dir = process.env[ENTRYPOINTS_VARIABLE];
  if (!dir) {
    throw new Error(
      `${ENTRYPOINTS_VARIABLE} is unset: the compiled entrypoints come from the global setup (test/support/global-setup.ts) of the integration, e2e and cluster projects`,
    );
  }
  return join(dir, `${entrypoint}.js`);
}
