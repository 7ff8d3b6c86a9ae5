// Billing's contract with the relay it meters. The relay depends on these; billing imports nothing from it.
import { lazy } from 'src/common/lazy';
import { Prices } from 'src/modules/billing/pricing';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Of the prompt tokens, those the upstream read from its cache (when it says). */
  cachedTokens?: number;
  /** Of the prompt tokens, those the upstream wrote to its cache (Anthropic); priced, never shown to the client. */
  cacheWriteTokens?: number;
  /** Of the completion tokens, those spent reasoning (when the upstream says); shown, billed as completion. */
  reasoningTokens?: number;
}

/** The most tokens the upstream can bill for a request: what admission holds. */
export interface HeldTokens {
  promptTokens: number;
  /** The output cap over all choices, plus what else the upstream bills as output (rejected prediction tokens). */
  completionTokens: number;
  /**
   * A closer bound, counted when first asked: present when `promptTokens` counted a long prompt's text
   * as its bytes, which costs nothing but is about four times the count of prose. Admission asks for
   * it only when the quick bound was refused (tokens per minute, balance, key limit), and billing only
   * when the upstream reports no usage; every other request never pays for the scan.
   */
  closer?: () => HeldTokens;
}

/** `held` with `promptTokens` more prompt tokens, in its closer bound too. */
export function withMorePromptTokens(held: HeldTokens, promptTokens: number): HeldTokens {
  const { closer } = held;
  return {
    promptTokens: held.promptTokens + promptTokens,
    completionTokens: held.completionTokens,
    ...(closer && { closer: lazy(() => withMorePromptTokens(closer(), promptTokens)) }),
  };
}

/** What billing needs to know of one request it meters: who pays, for which model, and the worst case held. */
export interface MeteredRequest {
  requestId: string;
  /** The client's own X-Request-Id, when it sent a valid one: kept on the bill beside ours. */
  clientRequestId: string | null;
  accountId: string;
  keyId: string;
  /** The key's lifetime spend limit in nano-dollars (null: none), enforced in the same hold as the balance. */
  keySpendLimit: bigint | null;
  /** The account group's price multiplier in millionths (1_000_000n: 1×), in the hold and the charge alike. */
  priceMultiplierPpm: bigint;
  model: Prices & { id: string };
  held: HeldTokens;
}

/**
 * The token windows a request was counted in at admission (the keys) and the estimate counted there:
 * once its real usage is known they are corrected to it, with the usage record or on their own.
 */
export interface CountedTokens {
  keys: string[];
  amount: number;
}

export type MeteredStatus = 'completed' | 'client_aborted' | 'upstream_broken';

/** What the relay reports about an answer that delivered something. Holds no content: the delivered tokens are counted as they pass. */
export interface MeteredResult {
  status: MeteredStatus;
  channelId: string;
  /** Usage as the upstream reported it; null when it did not (or the answer was cut short). */
  usage: TokenUsage | null;
  /** Tokens of the completion text the client received (an upper bound), for when the upstream gave no usage. */
  deliveredTokens: () => number;
  upstreamLatencyMs: number;
  /** The provider's own id of the attempt that answered, when it sent one (UpstreamResponse.providerRequestId). */
  providerRequestId?: string | null;
  /** Milliseconds from sending that attempt to its answer's first byte (its head). */
  firstByteMs?: number;
}

/**
 * Billing's hook into the relay. `record` runs before the last bytes of a complete answer are
 * written, so an answer the client got in full is always billed; `release` when nothing was delivered.
 */
export interface CompletionMeter {
  /**
   * Returns the usage billed: the upstream's, or the gateway's own count when the upstream gave none.
   * Resolves once the record has left the process, not on Redis's reply: billing follows that up.
   */
  record(result: MeteredResult): Promise<TokenUsage>;
  /** Gives the hold back unless usage was recorded; true when it did (nothing will be billed). */
  release(): Promise<boolean>;
}
