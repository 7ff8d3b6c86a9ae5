import { ScryptOptions } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';

/**
 * Niceness of the hashing threads (Linux: per thread). Under CPU contention the scheduler gives a
 * thread at niceness 0 (the relay's event loop) about ten times the CPU of one at 10, so a login
 * flood yields to completions instead of competing with them; on an idle CPU hashing runs at full speed.
 */
const HASHING_NICENESS = 10;

/**
 * How long a hashing thread waits for the next hash before it ends. A thread is a V8 isolate of its
 * own, about 10 MB of the API's resident memory; logins come in bursts, so a thread that served one
 * is kept for the rest of it and given back afterwards instead of for the life of the process.
 */
export const IDLE_THREAD_MS = 10_000;

// Plain JavaScript, evaluated, so it runs the same from dist/ and from the TypeScript sources under test.
// Lowering its own priority needs no privilege; where /proc/thread-self is missing it is skipped.
export const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
try {
  const threadId = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(threadId, ${HASHING_NICENESS});
} catch {}
parentPort.on('message', ({ password, salt, keyLength, options }) => {
  try {
    parentPort.postMessage({ key: scryptSync(password, salt, keyLength, options) });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) });
  }
});`;

/** What a login whose hashing thread died is told: nothing was decided, a retry gets a new thread. */
const threadLost = () =>
  new ApiError(ErrorKind.Overloaded, 'Password check was interrupted. Retry in a moment.', null, undefined, {
    'retry-after': '1',
  });

type Reply = { key: Uint8Array; error?: undefined } | { key?: undefined; error: string };

/**
 * scrypt on threads of its own instead of libuv's pool of four, which DNS lookups and file reads
 * share: a hash never makes them wait. One thread per concurrent hash, started on first use; the
 * caller bounds the concurrency (BoundedGate), so the pool never grows past that.
 */
export class ScryptPool {
  private readonly idle: Worker[] = [];
  private readonly all = new Set<Worker>();
  /** Per idle thread, the timer that ends it. */
  private readonly retirements = new Map<Worker, NodeJS.Timeout>();

  /** `source` is the thread's script; tests give one that fails in ways scrypt itself does not. */
  constructor(
    private readonly source = WORKER_SOURCE,
    private readonly idleMs = IDLE_THREAD_MS,
  ) {}

  /** Threads alive, busy or idle. */
  get threads(): number {
    return this.all.size;
  }

  readonly derive = (password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> => {
    const worker = this.takeIdle() ?? this.spawn();
    return new Promise<Buffer>((resolve, reject) => {
      const settle = () => {
        worker.off('message', onMessage);
        worker.off('error', onLost);
        worker.off('exit', onLost);
      };
      const onMessage = (reply: Reply) => {
        settle();
        this.rest(worker);
        if (reply.key) {
          resolve(Buffer.from(reply.key.buffer, reply.key.byteOffset, reply.key.byteLength));
        } else {
          reject(new Error(`scrypt failed: ${reply.error}`));
        }
      };
      // The thread died: with an error (out of memory, say) or quietly (it exited). Either way no reply
      // will come, so this hash is refused (503) and the thread dropped; the next hash starts another.
      const onLost = () => {
        settle();
        this.all.delete(worker);
        reject(threadLost());
      };
      worker.once('message', onMessage);
      worker.once('error', onLost);
      worker.once('exit', onLost);
      worker.postMessage({ password, salt, keyLength, options });
    });
  };

  async close(): Promise<void> {
    const workers = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    this.retirements.forEach((timer) => clearTimeout(timer));
    this.retirements.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private spawn(): Worker {
    const worker = new Worker(this.source, { eval: true });
    // A thread that dies while idle is dropped too, so it is never handed a hash it cannot answer; its
    // error, with no hash listening, must not become an uncaught 'error' that ends the process.
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      this.all.delete(worker);
      this.leaveIdle(worker);
    });
    // An idle hashing thread must not keep a process alive that is otherwise done.
    worker.unref();
    this.all.add(worker);
    return worker;
  }

  private takeIdle(): Worker | undefined {
    const worker = this.idle.pop();
    if (worker) {
      this.cancelRetirement(worker);
    }
    return worker;
  }

  /** Back to the idle threads, until the next hash or until it has waited `idleMs` for one. */
  private rest(worker: Worker): void {
    this.idle.push(worker);
    const timer = setTimeout(() => {
      this.all.delete(worker);
      this.leaveIdle(worker);
      worker.terminate().catch(() => undefined);
    }, this.idleMs);
    timer.unref();
    this.retirements.set(worker, timer);
  }

  private cancelRetirement(worker: Worker): void {
    clearTimeout(this.retirements.get(worker));
    this.retirements.delete(worker);
  }

  private leaveIdle(worker: Worker): void {
    this.cancelRetirement(worker);
    const idleAt = this.idle.indexOf(worker);
    if (idleAt >= 0) {
      this.idle.splice(idleAt, 1);
    }
  }
}
