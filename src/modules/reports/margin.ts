/** One group of the per-channel rollup, summed (nano-dollars and counts). */
export interface MarginTotals {
  requests: bigint;
  promptTokens: bigint;
  completionTokens: bigint;
  revenue: bigint;
  upstreamCost: bigint;
  uncostedRequests: bigint;
  uncostedRevenue: bigint;
}

/** A group's margin. Cost and margin are null unless every request of it had a known upstream cost. */
export interface Margin {
  costKnown: boolean;
  upstreamCost: bigint | null;
  margin: bigint | null;
  /** Over the requests whose cost is known only: their revenue less their cost. */
  knownMargin: bigint;
}

/** An unknown cost is never taken as zero: a group with any uncosted request has no margin, only a known part. */
export function marginOf(totals: MarginTotals): Margin {
  const costKnown = totals.uncostedRequests === 0n;
  const knownMargin = totals.revenue - totals.uncostedRevenue - totals.upstreamCost;
  return {
    costKnown,
    upstreamCost: costKnown ? totals.upstreamCost : null,
    margin: costKnown ? totals.revenue - totals.upstreamCost : null,
    knownMargin,
  };
}
