import { monthlyTotals } from 'src/modules/account-admin/monthly-totals';
import { UsageRowDto } from 'src/modules/usage/dto/usage.dto';

const day = (date: string, requests: number, cost: string): UsageRowDto => ({
  date,
  requests,
  promptTokens: requests * 10,
  completionTokens: requests,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  cost,
});

describe('monthlyTotals', () => {
  it('should sum days per month exactly, newest month first', () => {
    const totals = monthlyTotals([
      day('2026-10-31', 1, '0.000000001'),
      day('2026-11-01', 2, '0.1'),
      day('2026-11-24', 3, '0.200000002'),
    ]);

    expect(totals).toEqual([
      { month: '2026-11', requests: 5, promptTokens: 50, completionTokens: 5, cost: '0.300000002' },
      { month: '2026-10', requests: 1, promptTokens: 10, completionTokens: 1, cost: '0.000000001' },
    ]);
  });
});
