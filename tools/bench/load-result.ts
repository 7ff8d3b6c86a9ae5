/** Where and what to send; the same body and headers go to every target of a scenario. */
export interface LoadTarget {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Told as the measured window opens and as it closes (after the warm-up, at the end of the measured
 * time), so that counters outside the load generator — CPU time, the API's event-loop delay — can be
 * read over the same window as the requests counted.
 */
export interface WindowMarks {
  open(): void;
  close(): void;
}

/** p50/p99 of one measured quantity, in milliseconds. */
export interface Percentiles {
  p50: number;
  p99: number;
}

/** What one load run (one scenario against one target) measured, whichever client produced it. */
export interface LoadResult {
  /** Length of the measured window in seconds (the warm-up is not part of it). */
  windowSec: number;
  /** 2xx answers (complete streams) finished inside the window. */
  requests: number;
  requestsPerSec: number;
  /** Request start to last byte, 2xx only. */
  latencyMs: Percentiles | null;
  /** Streams only: request start to the first event carrying non-empty content. */
  ttftMs: Percentiles | null;
  /** Answers with a status outside 2xx, in the window; statusCodes says which. */
  non2xx: number;
  /** Transport errors, timeouts, streams cut off or carrying an error event, in the window. */
  errors: number;
  /** Failures during the warm-up: not in the figures, but the smoke check still fails on them. */
  warmupFailures: number;
  statusCodes: Record<string, number>;
}

/** Nearest-rank percentiles; null for an empty sample (e.g. every request failed). */
export function percentiles(values: number[]): Percentiles | null {
  if (values.length === 0) {
    return null;
  }
  const sorted = Float64Array.from(values).sort();
  return { p50: round(nearestRank(sorted, 0.5)), p99: round(nearestRank(sorted, 0.99)) };
}

/** The nearest-rank `p` quantile (0–1) of a non-empty, ascending sample. */
export function nearestRank(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
