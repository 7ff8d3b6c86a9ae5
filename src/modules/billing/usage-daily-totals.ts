import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { Charge } from 'src/modules/billing/settlement-charges';

/** What a batch adds to one row of the daily rollup (usage_daily). */
export interface UsageDailyTotal {
  accountId: string;
  /** The UTC day the request arrived, YYYY-MM-DD. */
  day: string;
  modelId: string;
  keyId: string;
  requests: number;
  prompt: bigint;
  completion: bigint;
  cached: bigint;
  cacheWrite: bigint;
  reasoning: bigint;
  /** What was charged, not the cost: the rollup adds up to the bills. */
  cost: bigint;
}

/** The settled payloads summed per account, day, model and key. */
export function usageDailyTotals(payloads: SettleCompletionPayload[], charges: Map<string, Charge>): UsageDailyTotal[] {
  const totals = new Map<string, UsageDailyTotal>();
  for (const payload of payloads) {
    const day = payload.createdAt.slice(0, 10);
    const key = [payload.accountId, day, payload.modelId, payload.keyId].join('|');
    const total = totals.get(key) ?? {
      accountId: payload.accountId,
      day,
      modelId: payload.modelId,
      keyId: payload.keyId,
      requests: 0,
      prompt: 0n,
      completion: 0n,
      cached: 0n,
      cacheWrite: 0n,
      reasoning: 0n,
      cost: 0n,
    };
    total.requests += 1;
    total.prompt += BigInt(payload.promptTokens);
    total.completion += BigInt(payload.completionTokens);
    total.cached += BigInt(payload.cachedTokens ?? 0);
    total.cacheWrite += BigInt(payload.cacheWriteTokens ?? 0);
    total.reasoning += BigInt(payload.reasoningTokens ?? 0);
    total.cost += charges.get(payload.requestId)!.charged;
    totals.set(key, total);
  }
  return [...totals.values()];
}
