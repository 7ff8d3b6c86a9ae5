import { ChildProcess } from 'node:child_process';
import { spawnEntrypoint, stopEntrypoint, untilPrinted } from 'test/support/entrypoint-process';

/**
 * The real worker entrypoint in its own process, with `env` over the test's; resolves once it reports
 * Postgres and Redis reachable.
 */
export async function spawnWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
  const worker = spawnEntrypoint('worker', { LOG_LEVEL: 'info', ...env });
  await untilPrinted(worker, 'worker ready');
  return worker.child;
}

/** Kills a worker process (SIGKILL unless told otherwise) and waits for it to be gone. */
export function stopWorker(child: ChildProcess | null, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  return stopEntrypoint(child, signal);
}
