import { marginOf, MarginTotals } from 'src/modules/reports/margin';

const totals = (overrides: Partial<MarginTotals>): MarginTotals => ({
  requests: 2n,
  promptTokens: 10n,
  completionTokens: 10n,
  revenue: 1_000n,
  upstreamCost: 600n,
  uncostedRequests: 0n,
  uncostedRevenue: 0n,
  ...overrides,
});

describe('marginOf', () => {
  it('should give revenue less cost when every request has a known cost', () => {
    expect(marginOf(totals({}))).toEqual({ costKnown: true, upstreamCost: 600n, margin: 400n, knownMargin: 400n });
  });

  it('should never count an unknown cost as zero: no margin, only the known part', () => {
    expect(marginOf(totals({ uncostedRequests: 1n, uncostedRevenue: 300n }))).toEqual({
      costKnown: false,
      upstreamCost: null,
      margin: null,
      knownMargin: 100n,
    });
  });

  it('should show a loss as a negative margin', () => {
    expect(marginOf(totals({ upstreamCost: 1_200n })).margin).toBe(-200n);
  });
});
