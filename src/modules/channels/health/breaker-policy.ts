/**
 * The channel circuit breaker's rules, as pure functions. The state itself lives in Redis (one hash
 * per channel, written only through a compare-and-set on its version, so concurrent processes never
 * lose each other's counts); each API process keeps a view of it, refreshed by pub/sub, so a request
 * reads no Redis while its channels are closed.
 */

export type BreakerState = 'closed' | 'open' | 'half_open';

/** What a channel's last failure was, for the answer when every route is open (docs/errors.md, "Statuses"). */
export type FailureKind = 'unreachable' | 'capacity' | 'error';

export interface BreakerView {
  state: BreakerState;
  /** Consecutive failures, over every API process. */
  failures: number;
  /** Open: not tried before this (ms since the epoch). Half-open: when the probe's lease ends. */
  openUntil: number;
  /** The last failure's kind, when there was one. */
  kind: FailureKind | null;
}

export const CLOSED: BreakerView = { state: 'closed', failures: 0, openUntil: 0, kind: null };

/** What routing does with a channel: send to it, skip it, or try to become its one probe. */
export type Gate = 'pass' | 'skip' | 'probe';

export function gate(view: BreakerView | undefined, now: number): Gate {
  if (!view || view.state === 'closed') {
    return 'pass';
  }
  // Half-open with the lease still running: another request (maybe in another process) is the probe.
  return now < view.openUntil ? 'skip' : 'probe';
}

/** How long the breaker stays open after its `opens`-th opening in a row: doubling, capped, never below retry-after. */
export function openDurationMs(opens: number, limits: { openMs: number; maxOpenMs: number }, retryAfterMs = 0): number {
  const doubled = limits.openMs * 2 ** Math.max(0, opens - 1);
  return Math.max(Math.min(doubled, limits.maxOpenMs), retryAfterMs);
}

/** An upstream's Retry-After (seconds or an HTTP date) or retry-after-ms, in ms; 0 when absent or unreadable. */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now = Date.now()): number {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const ms = Number(first(headers['retry-after-ms']));
  if (Number.isFinite(ms) && ms > 0) {
    return Math.min(Math.ceil(ms), MAX_RETRY_AFTER_MS);
  }
  const value = first(headers['retry-after'])?.trim();
  if (!value) {
    return 0;
  }
  const wait = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  return Number.isFinite(wait) && wait > 0 ? Math.min(Math.ceil(wait), MAX_RETRY_AFTER_MS) : 0;
}

/** A wrong or hostile header must not keep a channel out for days: an hour at most. */
const MAX_RETRY_AFTER_MS = 3_600_000;

/** Which kind of failure an upstream status is, for the all-routes-open answer. */
export function kindOfStatus(status: number): FailureKind {
  return status === 429 || status === 529 ? 'capacity' : 'error';
}

/** The answer's Retry-After when every route is open: until the first of them may be probed, at least 1 s. */
export function retryAfterSeconds(views: BreakerView[], now: number): number {
  const soonest = Math.min(...views.map((view) => view.openUntil));
  return Math.max(1, Math.ceil((soonest - now) / 1000));
}

/** Whether a channel open since `openedAt` has been open long enough to be switched off. */
export function dueForAutoDisable(openedAt: number, now: number, afterHours: number | null): boolean {
  return afterHours !== null && openedAt > 0 && now - openedAt >= afterHours * 3_600_000;
}

/** Everything kept per channel in Redis. */
export interface StoredBreaker extends BreakerView {
  /** Openings in a row (each failed probe adds one): the open time doubles with them. */
  opens: number;
  /** When the current run of openings began; 0 while closed. */
  openedAt: number;
  /** The last failure, sanitized: no keys, addresses or organisation ids. */
  lastError: string | null;
  lastOkAt: number;
  version: number;
}

export const FRESH: StoredBreaker = { ...CLOSED, opens: 0, openedAt: 0, lastError: null, lastOkAt: 0, version: 0 };

export interface BreakerLimits {
  failures: number;
  openMs: number;
  maxOpenMs: number;
}

export interface Failure {
  kind: FailureKind;
  error: string;
  retryAfterMs: number;
  /** This request was the half-open breaker's probe. */
  probe: boolean;
}

/**
 * Whether a failure is counted at all: while closed, and the probe's. One of a request that was in
 * flight when the breaker opened says nothing new, and skipping it keeps an outage to a handful of writes.
 */
export function countsFailure(state: BreakerState, probe: boolean): boolean {
  return state === 'closed' || (state === 'half_open' && probe);
}

/** A counted failure, as Redis applies it (HINCRBY, so concurrent ones are never lost): one more, and the latest. */
export function countFailure(stored: StoredBreaker, failure: Failure): StoredBreaker {
  return { ...stored, failures: stored.failures + 1, kind: failure.kind, lastError: failure.error };
}

/**
 * After a counted failure (in `stored.failures` already): a closed breaker at the limit opens, and a
 * half-open one reopens when this was its probe's, for twice as long. Null: it stays as it is.
 */
export function afterFailure(
  stored: StoredBreaker,
  failure: Failure,
  limits: BreakerLimits,
  now: number,
): StoredBreaker | null {
  const opens =
    (stored.state === 'closed' && stored.failures >= limits.failures) ||
    (stored.state === 'half_open' && failure.probe);
  if (!opens) {
    return null;
  }
  const count = stored.opens + 1;
  return {
    ...stored,
    state: 'open',
    opens: count,
    openUntil: now + openDurationMs(count, limits, failure.retryAfterMs),
    openedAt: stored.openedAt || now,
  };
}

/**
 * A success. The probe's (or the operator's test) closes the breaker; an ordinary request's resets a
 * closed breaker's count, and is ignored while it is open (it was sent before the breaker opened).
 * Null: nothing to write.
 */
export function afterSuccess(
  stored: StoredBreaker,
  by: 'request' | 'probe' | 'test',
  now: number,
): StoredBreaker | null {
  if (by === 'request' && (stored.state !== 'closed' || stored.failures === 0)) {
    return null;
  }
  return { ...stored, ...CLOSED, kind: stored.kind, opens: 0, openedAt: 0, lastOkAt: now };
}

/** This process holds the probe lease until `leaseUntil`: half-open. Null when the breaker closed meanwhile. */
export function afterProbeTaken(stored: StoredBreaker, leaseUntil: number): StoredBreaker | null {
  return stored.state === 'closed' ? null : { ...stored, state: 'half_open', openUntil: leaseUntil };
}

/** The kind that answers for routes that are all open: the one their last failures share; a mix is an error (500). */
export function sharedKind(views: BreakerView[]): FailureKind {
  const kinds = new Set(views.map((view) => view.kind ?? 'error'));
  return kinds.size === 1 ? [...kinds][0] : 'error';
}
