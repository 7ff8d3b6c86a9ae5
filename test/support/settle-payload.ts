import { SettleCompletionPayload } from 'src/common/queue/queue.constants';

let requests = 0;

/**
 * A completion as the worker claims it: one completion token at 100 nano-dollars, under a fresh
 * request id, unless `overrides` say otherwise.
 */
export function settlePayload(
  accountId: string,
  overrides: Partial<SettleCompletionPayload> = {},
): SettleCompletionPayload {
  return {
    requestId: `req_${++requests}`,
    accountId,
    keyId: 'key',
    modelId: 'model',
    channelId: 'channel',
    inputPrice: '0',
    outputPrice: '100000000',
    promptTokens: 0,
    completionTokens: 1,
    usageSource: 'upstream',
    status: 'completed',
    upstreamLatencyMs: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}
