import { BreakerView } from 'src/modules/channels/health/breaker-policy';
import { allOpenError, breakerKind, describeFailure, finalError, statusFailure } from 'src/modules/relay/route-failure';

describe('route failures', () => {
  it.each([
    [500, 'server_error', true],
    [503, 'server_error', true],
    [529, 'capacity', true],
    [429, 'capacity', true],
    [401, 'auth', true],
    [403, 'auth', true],
    [402, 'auth', true],
    [408, 'auth', true],
    [404, 'client_error', false],
    [409, 'client_error', false],
  ])('should fail over on %i (%s), counting against the breaker: %s', (status, outcome, breaker) => {
    expect(statusFailure(status)).toEqual({ failure: { kind: 'status', status, breaker }, outcome });
  });

  it.each([400, 413, 422])("should leave %i to the client's error, not a route failure", (status) => {
    expect(statusFailure(status)).toBeNull();
  });

  it('should keep capacity apart from other failures for the all-open answer', () => {
    expect(breakerKind({ kind: 'status', status: 429, breaker: true })).toBe('capacity');
    expect(breakerKind({ kind: 'status', status: 529, breaker: true })).toBe('capacity');
    expect(breakerKind({ kind: 'status', status: 502, breaker: true })).toBe('error');
    expect(breakerKind({ kind: 'abnormal', breaker: true })).toBe('error');
    expect(breakerKind({ kind: 'unreachable', breaker: true })).toBe('unreachable');
  });

  it("should describe a failure in the gateway's words, with no address in them", () => {
    const unreachable = { kind: 'unreachable' as const, breaker: true };
    expect(describeFailure(unreachable, 'timeout', 'UND_ERR_HEADERS_TIMEOUT')).toBe(
      'timed out (UND_ERR_HEADERS_TIMEOUT)',
    );
    expect(describeFailure(unreachable, 'unreachable', 'getaddrinfo ENOTFOUND api.example-upstream.com')).toBe(
      'unreachable (getaddrinfo ENOTFOUND [url])',
    );
    expect(describeFailure({ kind: 'status', status: 400, breaker: true }, 'account')).toBe(
      'status 400: the account cannot serve',
    );
    expect(describeFailure({ kind: 'abnormal', breaker: true }, 'broken')).toBe('the stream broke off');
  });

  it('should answer 503 server_overloaded for 429 and 529, with the headers given', () => {
    for (const status of [429, 529]) {
      const error = finalError({ kind: 'status', status, breaker: true }, 'm', { 'retry-after': '3' });
      expect([error.status, error.shape.code, error.headers]).toEqual([
        503,
        'server_overloaded',
        { 'retry-after': '3' },
      ]);
    }
  });

  it('should answer every-route-open with the status of what the routes share, always with retry-after', () => {
    const open = (kind: BreakerView['kind']): BreakerView => ({ state: 'open', failures: 5, openUntil: 0, kind });
    const cases: [BreakerView[], number][] = [
      [[open('unreachable'), open('unreachable')], 502],
      [[open('capacity')], 503],
      [[open('error')], 500],
      [[open('capacity'), open('unreachable')], 500],
    ];
    for (const [views, status] of cases) {
      const error = allOpenError(views, 'm', 12);
      expect([error.status, error.headers]).toEqual([status, { 'retry-after': '12' }]);
    }
  });
});
