import autocannon from 'autocannon';
import { LoadResult, LoadTarget, percentiles, round, WindowMarks } from 'tools/bench/load-result';

/** Per-request timeout; far above any healthy answer here, so a timeout means something is stuck. */
const REQUEST_TIMEOUT_SEC = 10;

/**
 * Non-streaming load with autocannon: `clients` keep-alive connections, each sending the next
 * request as soon as the previous answer arrives (closed loop). A separate warm-up run comes first
 * and only its failures are kept. Latencies are taken from autocannon's per-response event rather
 * than its histogram, which only resolves whole milliseconds — too coarse for sub-millisecond overheads.
 */
export async function runJsonLoad(
  target: LoadTarget,
  clients: number,
  warmupSec: number,
  durationSec: number,
  marks: WindowMarks,
): Promise<LoadResult> {
  let warmupFailures = 0;
  if (warmupSec > 0) {
    const warmup = await cannon(target, clients, warmupSec, () => undefined);
    warmupFailures = warmup.errors + warmup.non2xx;
  }
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let non2xx = 0;
  marks.open();
  const result = await cannon(target, clients, durationSec, (status, ms) => {
    if (status >= 200 && status < 300) {
      latencies.push(ms);
    } else {
      non2xx++;
      statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    }
  });
  marks.close();
  // autocannon reports the wall time it actually ran (setup included), rounded to 10 ms.
  const windowSec = result.duration > 0 ? result.duration : durationSec;
  return {
    windowSec,
    requests: latencies.length,
    requestsPerSec: round(latencies.length / windowSec, 1),
    latencyMs: percentiles(latencies),
    ttftMs: null,
    non2xx,
    errors: result.errors,
    warmupFailures,
    statusCodes,
  };
}

function cannon(
  target: LoadTarget,
  connections: number,
  durationSec: number,
  onResponse: (status: number, ms: number) => void,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.origin + target.path,
        method: 'POST',
        headers: target.headers,
        body: target.body,
        connections,
        duration: durationSec,
        timeout: REQUEST_TIMEOUT_SEC,
      },
      (error: Error | null, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => onResponse(statusCode, responseTime));
  });
}
