import { MetricsToken } from 'src/modules/health/metrics-token';

describe(MetricsToken.name, () => {
  it('should let anyone read the metrics when no token is configured', () => {
    expect(new MetricsToken(null).allows(undefined)).toBe(true);
  });

  it('should accept only the configured bearer token', () => {
    const sut = new MetricsToken('metrics-token-0123456789');
    expect(sut.allows('Bearer metrics-token-0123456789')).toBe(true);
    expect(sut.allows('Bearer metrics-token-012345678')).toBe(false);
    expect(sut.allows('metrics-token-0123456789')).toBe(false);
    expect(sut.allows('Bearer ')).toBe(false);
    expect(sut.allows(undefined)).toBe(false);
  });
});
