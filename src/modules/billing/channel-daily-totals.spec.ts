import { channelDailyTotals, routeKey } from 'src/modules/billing/channel-daily-totals';
import { Charge } from 'src/modules/billing/settlement-charges';
import { settlePayload } from 'test/support/settle-payload';

const charge = (charged: bigint): Charge => ({ cost: charged, charged });

describe('channelDailyTotals', () => {
  it('should price each request at its route cost, rounded up once per request, like its bill', () => {
    const first = settlePayload('a', { channelId: 'cheap', promptTokens: 3, completionTokens: 1, cachedTokens: 1 });
    const second = settlePayload('b', { channelId: 'cheap', promptTokens: 1, completionTokens: 0 });
    const costs = new Map([
      [routeKey('model', 'cheap'), { inputPrice: 1_000_000n, outputPrice: 2_500_000n, cachedInputPrice: 100_001n }],
    ]);
    const charges = new Map([
      [first.requestId, charge(10n)],
      [second.requestId, charge(4n)],
    ]);

    const [total] = channelDailyTotals([first, second], charges, costs);

    // first: (2 × 1e6 + 1 × 100001 + 1 × 2.5e6) / 1e6 = 4.600001 → 5; second: 1.
    expect(total).toEqual(
      expect.objectContaining({ day: '2026-01-01', requests: 2n, prompt: 4n, cached: 1n, revenue: 14n }),
    );
    expect(total.upstreamCost).toBe(6n);
    expect(total.uncostedRequests).toBe(0n);
  });

  it('should leave a request of a route without cost prices uncosted, in its own row per channel and day', () => {
    const priced = settlePayload('a', { channelId: 'priced' });
    const unpriced = settlePayload('a', { channelId: 'unpriced' });
    const nextDay = settlePayload('a', { channelId: 'unpriced', createdAt: '2026-01-02T00:00:00.000Z' });
    const costs = new Map([[routeKey('model', 'priced'), { inputPrice: 0n, outputPrice: 1_000_000n }]]);
    const charges = new Map([priced, unpriced, nextDay].map((p) => [p.requestId, charge(100n)]));

    const totals = channelDailyTotals([priced, unpriced, nextDay], charges, costs);

    expect(totals.map((t) => [t.day, t.channelId, t.upstreamCost, t.uncostedRequests, t.uncostedRevenue])).toEqual([
      ['2026-01-01', 'priced', 1n, 0n, 0n],
      ['2026-01-01', 'unpriced', 0n, 1n, 100n],
      ['2026-01-02', 'unpriced', 0n, 1n, 100n],
    ]);
  });
});
