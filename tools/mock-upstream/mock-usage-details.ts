/**
 * Usage details the mock reports when a request asks for them: cached and cache-write prompt tokens
 * and reasoning tokens. Translated requests (Anthropic, Gemini) carry only what the provider
 * understands, so the `mock` body field never reaches those dialects; the ask is a marker in the
 * prompt's text instead, which every dialect relays: `[mock-usage cached=40 cache_write=20 reasoning=30]`
 * (any of the three, in any order). The counts come on top of the prompt the mock counts and the
 * reply it writes, as if the conversation had a cached prefix and the model had thought before answering.
 */
export interface MockUsageDetails {
  /** Prompt tokens served from the cache. */
  cached: number;
  /** Prompt tokens written to the cache (Anthropic only: the other dialects have no such count). */
  cacheWrite: number;
  /** Completion tokens spent thinking, not shown in the reply. */
  reasoning: number;
}

const MARKER = /\[mock-usage((?: +(?:cached|cache_write|reasoning)=\d{1,9})+)\]/;

/** The details asked for anywhere in the raw request body, or null. */
export function mockUsageDetailsIn(rawBody: string): MockUsageDetails | null {
  const match = MARKER.exec(rawBody);
  if (!match) {
    return null;
  }
  const counts = Object.fromEntries(
    match[1]
      .trim()
      .split(/ +/)
      .map((pair) => pair.split('='))
      .map(([name, value]) => [name, Number(value)]),
  );
  return { cached: counts.cached ?? 0, cacheWrite: counts.cache_write ?? 0, reasoning: counts.reasoning ?? 0 };
}
