import { nearestRank, round } from 'tools/bench/load-result';

/** When one relayed request reached each step, ms on one clock; absent where it never did. */
export interface PhaseMarks {
  /** The request's head parsed by the API. */
  start: number;
  /** The upstream request created (the admission is over). */
  upstreamCreated?: number;
  /** The upstream request's head written to its socket. */
  upstreamSent?: number;
  /** The upstream answer's head read. */
  upstreamHeaders?: number;
  /** The upstream answer's last byte read. */
  upstreamEnd?: number;
  /** The client's response finished. */
  finish?: number;
}

export const PHASES = ['admission', 'sending', 'upstream', 'body', 'after', 'total'] as const;
export type Phase = (typeof PHASES)[number];

export interface PhaseFigures {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

export interface PhaseSummary {
  /** Requests that went upstream and answered the client (those refused before the upstream are not timed). */
  requests: number;
  /** Over the requests timed, or over a uniform sample of them (PhaseReservoir). */
  phases: Record<Phase, PhaseFigures> | null;
}

/** One request's phases in ms, or null for one that never went upstream or never finished. */
export function phasesOf(marks: PhaseMarks): Record<Phase, number> | null {
  const { start, upstreamCreated, upstreamHeaders, upstreamEnd, finish } = marks;
  if (
    upstreamCreated === undefined ||
    upstreamHeaders === undefined ||
    upstreamEnd === undefined ||
    finish === undefined
  ) {
    return null;
  }
  // Without a socket event (a pooled connection's write not reported), sending counts as nothing.
  const sent = marks.upstreamSent ?? upstreamCreated;
  return {
    admission: upstreamCreated - start,
    sending: sent - upstreamCreated,
    upstream: upstreamHeaders - sent,
    body: upstreamEnd - upstreamHeaders,
    after: finish - upstreamEnd,
    total: finish - start,
  };
}

/** Nearest-rank percentiles (as the load's latencies have) and means of each phase over the requests timed. */
export function summarisePhases(timed: Record<Phase, number>[]): PhaseSummary {
  if (timed.length === 0) {
    return { requests: 0, phases: null };
  }
  const phases = {} as Record<Phase, PhaseFigures>;
  for (const phase of PHASES) {
    const values = Float64Array.from(timed, (request) => request[phase]).sort();
    const at = (quantile: number) => round(nearestRank(values, quantile));
    const sum = values.reduce((total, value) => total + value, 0);
    phases[phase] = { p50: at(0.5), p90: at(0.9), p99: at(0.99), mean: round(sum / values.length) };
  }
  return { requests: timed.length, phases };
}

/**
 * The phases of at most `capacity` requests, a uniform sample of all those added (reservoir sampling),
 * so a preload left in the API for a long run keeps a bounded memory and summarises in bounded time.
 */
export class PhaseReservoir {
  private readonly sample: Record<Phase, number>[] = [];
  private seen = 0;

  constructor(
    private readonly capacity: number,
    private readonly random: () => number = Math.random,
  ) {}

  add(phases: Record<Phase, number>): void {
    this.seen++;
    if (this.sample.length < this.capacity) {
      this.sample.push(phases);
      return;
    }
    const slot = Math.floor(this.random() * this.seen);
    if (slot < this.capacity) {
      this.sample[slot] = phases;
    }
  }

  /** The sample's figures; `requests` counts every request added. */
  summary(): PhaseSummary {
    return { ...summarisePhases(this.sample), requests: this.seen };
  }
}
