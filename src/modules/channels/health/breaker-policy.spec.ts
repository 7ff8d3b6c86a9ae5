import {
  afterFailure,
  afterProbeTaken,
  afterSuccess,
  BreakerView,
  countFailure,
  countsFailure,
  dueForAutoDisable,
  Failure,
  FRESH,
  gate,
  openDurationMs,
  retryAfterMs,
  retryAfterSeconds,
  sharedKind,
  StoredBreaker,
} from 'src/modules/channels/health/breaker-policy';

const LIMITS = { failures: 5, openMs: 30_000, maxOpenMs: 300_000 };
const NOW = 1_800_000_000_000;
const failure = (overrides: Partial<Failure> = {}): Failure => ({
  kind: 'unreachable',
  error: 'unreachable (ECONNREFUSED)',
  retryAfterMs: 0,
  probe: false,
  ...overrides,
});

/** Applies `count` failures one after another, as consecutive requests would. */
/** Applies `count` failures one after another, as the breaker service does: counted if they count, then decided. */
function failTimes(count: number, from: StoredBreaker = FRESH, overrides: Partial<Failure> = {}): StoredBreaker {
  let stored = from;
  for (let index = 0; index < count; index++) {
    const next = failure(overrides);
    if (countsFailure(stored.state, next.probe)) {
      stored = countFailure(stored, next);
      stored = afterFailure(stored, next, LIMITS, NOW) ?? stored;
    }
  }
  return stored;
}

describe('breaker policy', () => {
  describe('opening', () => {
    it('should stay closed through four failures and open on the fifth, for 30 s', () => {
      expect(failTimes(4)).toMatchObject({ state: 'closed', failures: 4 });
      expect(failTimes(5)).toMatchObject({
        state: 'open',
        failures: 5,
        opens: 1,
        openUntil: NOW + 30_000,
        openedAt: NOW,
      });
    });

    it('should count from zero again after a success between failures', () => {
      const reset = afterSuccess(failTimes(4), 'request', NOW)!;
      expect(reset).toMatchObject({ state: 'closed', failures: 0, lastOkAt: NOW });
      expect(failTimes(4, reset)).toMatchObject({ state: 'closed', failures: 4 });
    });

    it('should keep the last failure and its kind for the health view and the all-open answer', () => {
      const open = failTimes(5, FRESH, { kind: 'capacity', error: 'status 429' });
      expect(open).toMatchObject({ kind: 'capacity', lastError: 'status 429' });
    });

    it("should never open for less than the upstream's retry-after", () => {
      const open = failTimes(5, FRESH, { retryAfterMs: 120_000 });
      expect(open.openUntil).toBe(NOW + 120_000);
    });

    it('should not count a failure that arrives while open (a request sent before it opened)', () => {
      expect(countsFailure('open', false)).toBe(false);
      expect(failTimes(1, failTimes(5))).toEqual(failTimes(5));
    });
  });

  describe('half-open', () => {
    const halfOpen = () => afterProbeTaken(failTimes(5), NOW + 40_000)!;

    it('should go half-open for the lease of the one probe', () => {
      expect(halfOpen()).toMatchObject({ state: 'half_open', openUntil: NOW + 40_000 });
    });

    it('should not go half-open once the breaker closed meanwhile', () => {
      expect(afterProbeTaken(FRESH, NOW)).toBeNull();
    });

    it("should close on the probe's success", () => {
      expect(afterSuccess(halfOpen(), 'probe', NOW)).toMatchObject({
        state: 'closed',
        failures: 0,
        opens: 0,
        openedAt: 0,
        openUntil: 0,
      });
    });

    it("should ignore an ordinary request's success while half-open or open: it was sent before the breaker opened", () => {
      expect(afterSuccess(halfOpen(), 'request', NOW)).toBeNull();
      expect(afterSuccess(failTimes(5), 'request', NOW)).toBeNull();
    });

    it("should close on the operator's successful test whatever the state", () => {
      expect(afterSuccess(failTimes(5), 'test', NOW)).toMatchObject({ state: 'closed', failures: 0 });
    });

    it('should reopen on the probe failing, for twice as long, keeping when the run of openings began', () => {
      const probeFailure = failure({ probe: true });
      const reopened = afterFailure(countFailure(halfOpen(), probeFailure), probeFailure, LIMITS, NOW + 40_000);
      expect(reopened).toMatchObject({
        state: 'open',
        opens: 2,
        failures: 6,
        openUntil: NOW + 40_000 + 60_000,
        openedAt: NOW,
      });
    });

    it("should not count, nor reopen on, another request's failure while a probe is out", () => {
      expect(countsFailure('half_open', false)).toBe(false);
      expect(countsFailure('half_open', true)).toBe(true);
      expect(afterFailure(countFailure(halfOpen(), failure()), failure(), LIMITS, NOW + 1)).toBeNull();
    });

    it('should double the open time up to five minutes and no further', () => {
      expect([1, 2, 3, 4, 5, 6, 20].map((opens) => openDurationMs(opens, LIMITS))).toEqual([
        30_000, 60_000, 120_000, 240_000, 300_000, 300_000, 300_000,
      ]);
      expect(openDurationMs(6, LIMITS, 600_000)).toBe(600_000);
    });
  });

  describe('routing gate', () => {
    const view = (state: BreakerView['state'], openUntil: number): BreakerView => ({
      state,
      failures: 5,
      openUntil,
      kind: 'unreachable',
    });

    it('should pass a channel with no breaker state or a closed one', () => {
      expect(gate(undefined, NOW)).toBe('pass');
      expect(gate({ ...view('closed', 0), failures: 3 }, NOW)).toBe('pass');
    });

    it('should skip an open channel until its open time ends, then offer the probe', () => {
      expect(gate(view('open', NOW + 1), NOW)).toBe('skip');
      expect(gate(view('open', NOW), NOW)).toBe('probe');
    });

    it("should skip a half-open channel while its probe's lease runs, then offer the probe again", () => {
      expect(gate(view('half_open', NOW + 5_000), NOW)).toBe('skip');
      expect(gate(view('half_open', NOW - 1), NOW)).toBe('probe');
    });
  });

  describe('the answer when every route is open', () => {
    const open = (kind: BreakerView['kind'], openUntil: number): BreakerView => ({
      state: 'open',
      failures: 5,
      openUntil,
      kind,
    });

    it('should answer with the kind the routes share, and 500 for a mix', () => {
      expect(sharedKind([open('unreachable', 0), open('unreachable', 0)])).toBe('unreachable');
      expect(sharedKind([open('capacity', 0)])).toBe('capacity');
      expect(sharedKind([open('capacity', 0), open('unreachable', 0)])).toBe('error');
    });

    it('should say to retry when the first route may be probed, rounded up, at least 1 s', () => {
      expect(retryAfterSeconds([open('error', NOW + 12_001), open('error', NOW + 30_000)], NOW)).toBe(13);
      expect(retryAfterSeconds([open('error', NOW - 5_000)], NOW)).toBe(1);
    });
  });

  describe("the upstream's retry-after", () => {
    it('should read seconds, an HTTP date and retry-after-ms', () => {
      expect(retryAfterMs({ 'retry-after': '20' }, NOW)).toBe(20_000);
      expect(retryAfterMs({ 'retry-after': new Date(NOW + 7_000).toUTCString() }, NOW)).toBe(7_000);
      expect(retryAfterMs({ 'retry-after-ms': '1500', 'retry-after': '20' }, NOW)).toBe(1_500);
    });

    it('should ignore a missing, unreadable or past value, and cap a huge one at an hour', () => {
      expect(retryAfterMs({}, NOW)).toBe(0);
      expect(retryAfterMs({ 'retry-after': 'soon' }, NOW)).toBe(0);
      expect(retryAfterMs({ 'retry-after': new Date(NOW - 1_000).toUTCString() }, NOW)).toBe(0);
      expect(retryAfterMs({ 'retry-after': '999999' }, NOW)).toBe(3_600_000);
    });
  });

  describe('auto-disable', () => {
    it('should be due once the channel has been open the set hours, never when unset', () => {
      const openedAt = NOW - 2 * 3_600_000;
      expect(dueForAutoDisable(openedAt, NOW, 2)).toBe(true);
      expect(dueForAutoDisable(openedAt, NOW, 3)).toBe(false);
      expect(dueForAutoDisable(openedAt, NOW, null)).toBe(false);
      expect(dueForAutoDisable(0, NOW, 1)).toBe(false);
    });
  });
});
