import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { LoadResult, LoadTarget, round, WindowMarks } from 'tools/bench/load-result';
import { rssKb } from 'tools/bench/proc-stats';

/** What the API process held before, at most during, and right after one long stream. */
export interface StreamMemory {
  /** Bytes of event stream the client received. */
  streamedMb: number;
  rssMb: { before: number; peak: number; after: number };
  heapUsedMb: { before: number; peak: number; after: number };
}

const SAMPLE_EVERY_MS = 100;
const CHOICES = 8;
/** Per choice; the bench model's maxOutputTokens. */
const MAX_TOKENS = 16_384;
/** Ordinary words: one token each, as the mock counts them and about as a tokenizer would. */
const REPLY = 'The quick brown fox jumps over the lazy dog again ';

/**
 * One stream of `n: 8` choices of 16k tokens each (about 30 MB of events) through the gateway,
 * while the API's RSS and V8 heap are sampled: a relay that keeps a stream's chunks until its end
 * grows by about the stream's size, one that does not stays flat.
 */
export async function runLongStream(
  target: LoadTarget,
  apiPid: number,
  marks: WindowMarks,
): Promise<{ result: LoadResult; memory: StreamMemory }> {
  const body = {
    ...(JSON.parse(target.body) as Record<string, unknown>),
    stream: true,
    n: CHOICES,
    max_tokens: MAX_TOKENS,
    mock: { reply: REPLY, repeat: Math.ceil(MAX_TOKENS / 10) },
  };
  const pool = new Pool(target.origin, { connections: 2 });
  try {
    const before = await sample(pool, apiPid);
    const peak = { ...before };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const now = await sample(pool, apiPid);
        peak.rssKb = Math.max(peak.rssKb, now.rssKb);
        peak.heapBytes = Math.max(peak.heapBytes, now.heapBytes);
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
      }
    })();
    const startedAt = performance.now();
    marks.open();
    const { bytes, complete, status } = await readStream(pool, { ...target, body: JSON.stringify(body) });
    marks.close();
    const ms = round(performance.now() - startedAt);
    sampling = false;
    await sampler;
    const after = await sample(pool, apiPid);
    const mb = (kb: number) => round(kb / 1024, 1);
    const heapMb = (b: number) => round(b / 1024 / 1024, 1);
    return {
      result: {
        windowSec: round(ms / 1000, 1),
        requests: complete ? 1 : 0,
        requestsPerSec: 0,
        latencyMs: complete ? { p50: ms, p99: ms } : null,
        ttftMs: null,
        non2xx: status >= 200 && status < 300 ? 0 : 1,
        errors: complete || status >= 300 ? 0 : 1,
        warmupFailures: 0,
        statusCodes: status >= 300 ? { [status]: 1 } : {},
      },
      memory: {
        streamedMb: round(bytes / 1024 / 1024, 1),
        rssMb: { before: mb(before.rssKb), peak: mb(peak.rssKb), after: mb(after.rssKb) },
        heapUsedMb: { before: heapMb(before.heapBytes), peak: heapMb(peak.heapBytes), after: heapMb(after.heapBytes) },
      },
    };
  } finally {
    await pool.destroy();
  }
}

async function readStream(
  pool: Pool,
  target: LoadTarget,
): Promise<{ bytes: number; complete: boolean; status: number }> {
  const response = await pool.request({
    method: 'POST',
    path: target.path,
    headers: target.headers,
    body: target.body,
  });
  let bytes = 0;
  let tail = '';
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    tail = (tail + chunk.toString('utf8')).slice(-64);
  }
  return { bytes, complete: tail.endsWith('data: [DONE]\n\n'), status: response.statusCode };
}

/** RSS from /proc, heap used from the API's own /metrics (prom-client's default Node metrics). */
async function sample(pool: Pool, pid: number): Promise<{ rssKb: number; heapBytes: number }> {
  const response = await pool.request({ method: 'GET', path: '/metrics' });
  const text = await response.body.text();
  const heap = /^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)/m.exec(text);
  return { rssKb: rssKb(pid), heapBytes: heap ? Number(heap[1]) : 0 };
}
