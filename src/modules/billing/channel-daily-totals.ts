import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { Prices, splitUsageCost } from 'src/modules/billing/pricing';
import { Charge } from 'src/modules/billing/settlement-charges';

/** A route's cost prices (nano-dollars per million tokens), keyed by `routeKey(modelId, channelId)`. */
export type RouteCosts = Map<string, Prices>;

export const routeKey = (modelId: string, channelId: string) => `${modelId}\u0000${channelId}`;

/** What a batch adds to one row of usage_channel_daily. */
export interface ChannelDailyTotal {
  day: string;
  modelId: string;
  channelId: string;
  requests: bigint;
  prompt: bigint;
  completion: bigint;
  cached: bigint;
  cacheWrite: bigint;
  revenue: bigint;
  upstreamCost: bigint;
  uncostedRequests: bigint;
  uncostedRevenue: bigint;
}

/**
 * The settled payloads summed per day, model and channel. Each request's upstream cost is priced
 * like its bill (the same split of cached and cache-write tokens, rounded up once per request) at
 * its route's cost prices; a route without them leaves the request uncosted, not free.
 */
export function channelDailyTotals(
  payloads: SettleCompletionPayload[],
  charges: Map<string, Charge>,
  costs: RouteCosts,
): ChannelDailyTotal[] {
  const totals = new Map<string, ChannelDailyTotal>();
  for (const payload of payloads) {
    const day = payload.createdAt.slice(0, 10);
    const key = [day, payload.modelId, payload.channelId].join('\u0000');
    const total = totals.get(key) ?? emptyTotal(day, payload.modelId, payload.channelId);
    const revenue = charges.get(payload.requestId)!.charged;
    const prices = costs.get(routeKey(payload.modelId, payload.channelId));
    total.requests += 1n;
    total.prompt += BigInt(payload.promptTokens);
    total.completion += BigInt(payload.completionTokens);
    total.cached += BigInt(payload.cachedTokens ?? 0);
    total.cacheWrite += BigInt(payload.cacheWriteTokens ?? 0);
    total.revenue += revenue;
    if (prices) {
      total.upstreamCost += splitUsageCost(prices, payload);
    } else {
      total.uncostedRequests += 1n;
      total.uncostedRevenue += revenue;
    }
    totals.set(key, total);
  }
  return [...totals.values()];
}

function emptyTotal(day: string, modelId: string, channelId: string): ChannelDailyTotal {
  return {
    day,
    modelId,
    channelId,
    requests: 0n,
    prompt: 0n,
    completion: 0n,
    cached: 0n,
    cacheWrite: 0n,
    revenue: 0n,
    upstreamCost: 0n,
    uncostedRequests: 0n,
    uncostedRevenue: 0n,
  };
}
