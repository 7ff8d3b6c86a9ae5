import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { PhaseMarks, PhaseReservoir, phasesOf } from 'tools/bench/request-phases';

/*
 * Where a relayed request's time goes inside the API, from Node's and undici's diagnostics channels:
 * the admission (head parsed → upstream request created), the upstream's answer, and what follows it.
 * A developer's measurement, loaded into the API under the bench's load:
 *   BENCH_GATEWAY_NODE_ARGS="-r ./dist-tools/tools/bench/request-phases.preload.js" \
 *     node dist-tools/tools/bin/bench.js --only json-c50-up50ms
 * It writes `request-phases-<pid>.json` to REQUEST_PHASES_DIR (default: the OS's temporary directory)
 * every two seconds and as the process exits; warm-up included, percentiles over a sample of at most
 * SAMPLE_SIZE requests. Nothing of a request's content is read.
 */

const WRITE_EVERY_MS = 2_000;
/** Requests whose phases are kept (a uniform sample beyond it): a few MB, sorted in milliseconds. */
const SAMPLE_SIZE = 50_000;
const OUT_DIR = process.env.REQUEST_PHASES_DIR ?? tmpdir();

interface ServerMessage {
  request: { url?: string };
  response: object;
}
interface UndiciMessage {
  request: object;
}

function record(): void {
  const current = new AsyncLocalStorage<PhaseMarks>();
  const byObject = new WeakMap<object, PhaseMarks>();
  const timed = new PhaseReservoir(SAMPLE_SIZE);
  const mark = (key: keyof PhaseMarks) => (message: unknown) => {
    const marks = byObject.get((message as UndiciMessage).request);
    if (marks && marks[key] === undefined) {
      marks[key] = performance.now();
    }
  };

  subscribe('http.server.request.start', (message) => {
    const { request, response } = message as ServerMessage;
    if (!request.url?.startsWith('/v1/')) {
      return;
    }
    const marks: PhaseMarks = { start: performance.now() };
    byObject.set(response, marks);
    // The request's handling continues from this synchronous call: what it starts finds these marks.
    current.enterWith(marks);
  });
  subscribe('undici:request:create', (message) => {
    const marks = current.getStore();
    if (marks && marks.upstreamCreated === undefined) {
      marks.upstreamCreated = performance.now();
      byObject.set((message as UndiciMessage).request, marks);
    }
  });
  subscribe('undici:client:sendHeaders', mark('upstreamSent'));
  subscribe('undici:request:headers', mark('upstreamHeaders'));
  subscribe('undici:request:trailers', mark('upstreamEnd'));
  subscribe('http.server.response.finish', (message) => {
    const marks = byObject.get((message as ServerMessage).response);
    if (marks) {
      marks.finish = performance.now();
      const phases = phasesOf(marks);
      if (phases) {
        timed.add(phases);
      }
    }
  });

  const write = () => {
    const summary = timed.summary();
    if (summary.requests > 0) {
      writeFileSync(join(OUT_DIR, `request-phases-${process.pid}.json`), JSON.stringify(summary));
    }
  };
  setInterval(write, WRITE_EVERY_MS).unref();
  process.once('exit', write);
}

// Worker threads (the password hashing pool) serve no requests.
if (isMainThread) {
  record();
}
