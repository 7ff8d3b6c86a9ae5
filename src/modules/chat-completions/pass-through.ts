import { TokenUsage } from 'src/modules/billing/metering.types';
import { RelayOutput } from 'src/modules/chat-completions/stream-relay';
import { UpstreamRequest } from 'src/modules/chat-completions/upstream/provider-adapter';

/**
 * A client speaking a provider's own API, on a route to a channel of that provider: its request goes
 * upstream as it came (the route's model swapped in) and the answer comes back as the provider gave
 * it. Routing, failover, the breaker, the timeouts, the hold and metering stay the relay's; only the
 * translation both ways is skipped, so nothing the chat format cannot carry is lost.
 */
export interface PassThrough {
  request: UpstreamRequest;
  /** The upstream's JSON answer as the client gets it, with what to bill; null when it is not a valid answer. */
  answer(upstream: unknown): PassedAnswer | null;
  /** For one stream: a translator that forwards the upstream's events while counting, and the client's writer. */
  stream(): RelayOutput;
}

export interface PassedAnswer {
  /** Usage as the upstream reported it, or null. */
  usage: TokenUsage | null;
  /** Tokens of the generated text in the answer, billed when the upstream reported no usage. */
  deliveredTokens: () => number;
  /** The body to send, given the usage billed (shown when the upstream left its own out). */
  body(billed: TokenUsage): unknown;
}
