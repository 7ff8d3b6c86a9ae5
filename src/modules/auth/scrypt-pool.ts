import { ScryptOptions } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * Niceness of the hashing threads (Linux: per thread). Under CPU contention the scheduler gives a
 * thread at niceness 0 (the relay's event loop) about ten times the CPU of one at 10, so a login
 * flood yields to completions instead of competing with them; on an idle CPU hashing runs at full speed.
 */
const HASHING_NICENESS = 10;

// Plain JavaScript, evaluated, so it runs the same from dist/ and from the TypeScript sources under test.
// Lowering its own priority needs no privilege; where /proc/thread-self is missing it is skipped.
const WORKER_SOURCE = `
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

type Reply = { key: Uint8Array; error?: undefined } | { key?: undefined; error: string };

/**
 * scrypt on threads of its own instead of libuv's pool of four, which DNS lookups and file reads
 * share: a hash never makes them wait. One thread per concurrent hash, started on first use; the
 * caller bounds the concurrency (BoundedGate), so the pool never grows past that.
 */
export class ScryptPool {
  private readonly idle: Worker[] = [];
  private readonly all = new Set<Worker>();

  readonly derive = (password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> => {
    const worker = this.idle.pop() ?? this.spawn();
    return new Promise<Buffer>((resolve, reject) => {
      const onMessage = (reply: Reply) => {
        worker.off('error', onError);
        this.idle.push(worker);
        if (reply.key) {
          resolve(Buffer.from(reply.key.buffer, reply.key.byteOffset, reply.key.byteLength));
        } else {
          reject(new Error(`scrypt failed: ${reply.error}`));
        }
      };
      // The thread died (out of memory, say): it is dropped, the next hash starts another.
      const onError = (error: Error) => {
        worker.off('message', onMessage);
        this.all.delete(worker);
        reject(error);
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
      worker.postMessage({ password, salt, keyLength, options });
    });
  };

  async close(): Promise<void> {
    const workers = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    // An idle hashing thread must not keep a process alive that is otherwise done.
    worker.unref();
    this.all.add(worker);
    return worker;
  }
}
