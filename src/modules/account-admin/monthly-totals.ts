import { formatUsd, parseUsd } from 'src/common/money/money';
import { UsageRowDto } from 'src/modules/usage/dto/usage.dto';

export interface MonthlyTotal {
  /** YYYY-MM (UTC). */
  month: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** USD charged, exact. */
  cost: string;
}

/** Daily totals (the console's rows, grouped by day) summed per calendar month, newest month first. */
export function monthlyTotals(daily: UsageRowDto[]): MonthlyTotal[] {
  const months = new Map<string, { requests: number; prompt: number; completion: number; cost: bigint }>();
  for (const day of daily) {
    const month = (day.date ?? '').slice(0, 7);
    const total = months.get(month) ?? { requests: 0, prompt: 0, completion: 0, cost: 0n };
    total.requests += day.requests;
    total.prompt += day.promptTokens;
    total.completion += day.completionTokens;
    total.cost += parseUsd(day.cost) ?? 0n;
    months.set(month, total);
  }
  return [...months.entries()]
    .sort(([a], [b]) => b.localeCompare(a))
    .map(([month, total]) => ({
      month,
      requests: total.requests,
      promptTokens: total.prompt,
      completionTokens: total.completion,
      cost: formatUsd(total.cost),
    }));
}
