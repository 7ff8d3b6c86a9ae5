import { PhaseReservoir, phasesOf, summarisePhases } from 'tools/bench/request-phases';

describe('phasesOf', () => {
  it("should split a relayed request's time at the upstream's steps", () => {
    const marks = {
      start: 10,
      upstreamCreated: 14,
      upstreamSent: 14.5,
      upstreamHeaders: 65,
      upstreamEnd: 65.5,
      finish: 67,
    };
    expect(phasesOf(marks)).toEqual({ admission: 4, sending: 0.5, upstream: 50.5, body: 0.5, after: 1.5, total: 57 });
  });

  it('should count no sending time when the socket write was not reported', () => {
    const marks = { start: 0, upstreamCreated: 1, upstreamHeaders: 51, upstreamEnd: 52, finish: 53 };
    expect(phasesOf(marks)).toMatchObject({ sending: 0, upstream: 50 });
  });

  it('should not time a request refused before the upstream, or one cut before its end', () => {
    expect(phasesOf({ start: 0, finish: 1 })).toBeNull();
    expect(phasesOf({ start: 0, upstreamCreated: 1, upstreamHeaders: 51, upstreamEnd: 52 })).toBeNull();
  });
});

describe('summarisePhases', () => {
  it('should give each phase its percentiles and mean over the requests', () => {
    const timed = Array.from({ length: 100 }, (_, index) => ({
      admission: index + 1,
      sending: 0,
      upstream: 50,
      body: 0,
      after: 1,
      total: index + 52,
    }));
    const summary = summarisePhases(timed);
    expect(summary.requests).toBe(100);
    expect(summary.phases?.admission).toEqual({ p50: 50, p90: 90, p99: 99, mean: 50.5 });
    expect(summary.phases?.upstream).toEqual({ p50: 50, p90: 50, p99: 50, mean: 50 });
  });

  it('should give no figures without a timed request', () => {
    expect(summarisePhases([])).toEqual({ requests: 0, phases: null });
  });
});

describe('PhaseReservoir', () => {
  const phases = (admission: number) => ({
    admission,
    sending: 0,
    upstream: 50,
    body: 0,
    after: 1,
    total: admission + 51,
  });

  it('should keep every request while under its capacity', () => {
    const reservoir = new PhaseReservoir(10);
    [1, 2, 3].forEach((admission) => reservoir.add(phases(admission)));
    expect(reservoir.summary()).toEqual(summarisePhases([phases(1), phases(2), phases(3)]));
  });

  it('should count every request but keep at most its capacity, replacing at random slots', () => {
    // A generator that always picks slot 0 of the seen ones: each later request replaces the first.
    const reservoir = new PhaseReservoir(2, () => 0);
    [1, 2, 3, 4].forEach((admission) => reservoir.add(phases(admission)));
    const summary = reservoir.summary();
    expect(summary.requests).toBe(4);
    expect(summary.phases?.admission).toEqual(summarisePhases([phases(4), phases(2)]).phases?.admission);
  });

  it('should not replace when the drawn slot is past its capacity', () => {
    const reservoir = new PhaseReservoir(2, () => 0.99);
    [1, 2, 3].forEach((admission) => reservoir.add(phases(admission)));
    expect(reservoir.summary().phases?.admission.mean).toBe(1.5);
  });
});
