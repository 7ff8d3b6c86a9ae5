import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { LoadResult, LoadTarget, percentiles, round, WindowMarks } from 'tools/bench/load-result';

interface Sample {
  startedAt: number;
  endedAt: number;
  /** Milliseconds to the first event with non-empty content; undefined if none came. */
  ttft: number | undefined;
  outcome: 'ok' | 'non2xx' | 'error';
  status?: number;
}

// The role event carries `"content":""`; the first real token is the first non-empty content value.
const CONTENT = /"content"\s*:\s*"[^"]/;
const ERROR_EVENT = /"error"\s*:\s*\{/;
/** Enough of the previous chunk to catch a marker split across two chunks. */
const CARRY_CHARS = 64;
/** In-flight streams may finish after the window; past this they are cut and counted as errors. */
const DRAIN_GRACE_MS = 30_000;
/** Share of the warm-up over which clients start, evenly spaced; the rest lets every client finish a stream. */
const RAMP_SHARE = 2 / 3;
/** After a failure, a client pauses briefly so a dead target yields a count, not a hot loop. */
const ERROR_BACKOFF_MS = 20;

/**
 * Streaming load with undici: `clients` workers, each looping one stream at a time over its own
 * keep-alive connection. One session covers warm-up and measurement so connections persist;
 * the first requests are spread over the first two thirds of the warm-up so a thousand clients do
 * not arrive as one burst of connects. Streams started in the warm-up count only as warm-up failures;
 * req/s counts complete streams that ended inside the window; latencies are of streams started in it.
 */
export async function runStreamLoad(
  target: LoadTarget,
  clients: number,
  warmupSec: number,
  durationSec: number,
  marks: WindowMarks,
): Promise<LoadResult> {
  const pool = new Pool(target.origin, {
    connections: clients,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: DRAIN_GRACE_MS,
    bodyTimeout: DRAIN_GRACE_MS,
  });
  const startedAt = performance.now();
  const windowStart = startedAt + warmupSec * 1000;
  const windowEnd = windowStart + durationSec * 1000;
  const hardStop = new AbortController();
  // Every in-flight request listens on this one signal; the default cap of 10 listeners would warn.
  setMaxListeners(clients + 10, hardStop.signal);
  const hardTimer = setTimeout(() => hardStop.abort(), windowEnd - startedAt + DRAIN_GRACE_MS);
  const openTimer = setTimeout(() => marks.open(), windowStart - startedAt);
  const closeTimer = setTimeout(() => marks.close(), windowEnd - startedAt);
  const samples: Sample[] = [];
  const client = async (index: number): Promise<void> => {
    await sleep((index * warmupSec * 1000 * RAMP_SHARE) / clients);
    while (performance.now() < windowEnd && !hardStop.signal.aborted) {
      const sample = await oneStream(pool, target, hardStop.signal);
      samples.push(sample);
      if (sample.outcome !== 'ok') {
        await sleep(ERROR_BACKOFF_MS);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: clients }, (_, index) => client(index)));
  } finally {
    clearTimeout(hardTimer);
    clearTimeout(openTimer);
    clearTimeout(closeTimer);
    await pool.destroy();
  }
  return summarize(samples, windowStart, windowEnd, durationSec);
}

async function oneStream(pool: Pool, target: LoadTarget, signal: AbortSignal): Promise<Sample> {
  const startedAt = performance.now();
  const sample = (outcome: Sample['outcome'], ttft?: number, status?: number): Sample => ({
    startedAt,
    endedAt: performance.now(),
    ttft,
    outcome,
    status,
  });
  try {
    const response = await pool.request({
      method: 'POST',
      path: target.path,
      headers: target.headers,
      body: target.body,
      signal,
    });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump();
      return sample('non2xx', undefined, response.statusCode);
    }
    let ttft: number | undefined;
    let carry = '';
    let sawError = false;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      const text = carry + chunk.toString('utf8');
      if (ttft === undefined && CONTENT.test(text)) {
        ttft = performance.now() - startedAt;
      }
      sawError ||= ERROR_EVENT.test(text);
      carry = text.slice(-CARRY_CHARS);
    }
    // A stream is only a success if it ended properly: `[DONE]` last, no error event on the way.
    const complete = carry.includes('data: [DONE]') && !sawError;
    return sample(complete ? 'ok' : 'error', ttft, response.statusCode);
  } catch {
    return sample('error');
  }
}

function summarize(samples: Sample[], windowStart: number, windowEnd: number, durationSec: number): LoadResult {
  const measured = samples.filter((s) => s.startedAt >= windowStart);
  const ok = measured.filter((s) => s.outcome === 'ok');
  const statusCodes: Record<string, number> = {};
  for (const s of measured) {
    if (s.outcome === 'non2xx' && s.status !== undefined) {
      statusCodes[s.status] = (statusCodes[s.status] ?? 0) + 1;
    }
  }
  // Throughput counts every stream that completed inside the window, including ones begun in the warm-up.
  const finished = samples.filter((s) => s.outcome === 'ok' && s.endedAt >= windowStart && s.endedAt <= windowEnd);
  const ttfts = ok.map((s) => s.ttft).filter((t): t is number => t !== undefined);
  return {
    windowSec: durationSec,
    requests: finished.length,
    requestsPerSec: round(finished.length / durationSec, 1),
    latencyMs: percentiles(ok.map((s) => s.endedAt - s.startedAt)),
    ttftMs: percentiles(ttfts),
    non2xx: measured.filter((s) => s.outcome === 'non2xx').length,
    errors: measured.filter((s) => s.outcome === 'error').length,
    warmupFailures: samples.filter((s) => s.startedAt < windowStart && s.outcome !== 'ok').length,
    statusCodes,
  };
}
