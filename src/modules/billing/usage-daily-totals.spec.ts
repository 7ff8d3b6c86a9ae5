import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { usageDailyTotals } from 'src/modules/billing/usage-daily-totals';

let requests = 0;
function payload(overrides: Partial<SettleCompletionPayload>): SettleCompletionPayload {
  return {
    requestId: `req_${++requests}`,
    accountId: 'a',
    keyId: 'k1',
    modelId: 'm1',
    channelId: 'c',
    inputPrice: '0',
    outputPrice: '0',
    promptTokens: 10,
    completionTokens: 20,
    usageSource: 'upstream',
    status: 'completed',
    upstreamLatencyMs: 1,
    createdAt: '2026-05-01T23:59:59.999Z',
    ...overrides,
  };
}

describe(usageDailyTotals.name, () => {
  it('should sum requests, tokens (with their cached, cache-write and reasoning parts) and what was charged per account, UTC day, model and key', () => {
    const payloads = [
      payload({}),
      payload({ promptTokens: 3, completionTokens: 2, cachedTokens: 1, cacheWriteTokens: 2, reasoningTokens: 1 }),
      payload({ createdAt: '2026-05-02T00:00:00.000Z' }),
      payload({ modelId: 'm2' }),
      payload({ keyId: 'k2' }),
      payload({ accountId: 'b' }),
    ];
    const charges = new Map(payloads.map((p, index) => [p.requestId, { cost: 1_000n, charged: BigInt(index + 1) }]));

    const totals = usageDailyTotals(payloads, charges);

    const row = (accountId: string, day: string, modelId: string, keyId: string) => ({
      accountId,
      day,
      modelId,
      keyId,
    });
    const details = (cached = 0n, cacheWrite = 0n, reasoning = 0n) => ({ cached, cacheWrite, reasoning });
    expect(totals).toEqual([
      {
        ...row('a', '2026-05-01', 'm1', 'k1'),
        requests: 2,
        prompt: 13n,
        completion: 22n,
        ...details(1n, 2n, 1n),
        cost: 3n,
      },
      { ...row('a', '2026-05-02', 'm1', 'k1'), requests: 1, prompt: 10n, completion: 20n, ...details(), cost: 3n },
      { ...row('a', '2026-05-01', 'm2', 'k1'), requests: 1, prompt: 10n, completion: 20n, ...details(), cost: 4n },
      { ...row('a', '2026-05-01', 'm1', 'k2'), requests: 1, prompt: 10n, completion: 20n, ...details(), cost: 5n },
      { ...row('b', '2026-05-01', 'm1', 'k1'), requests: 1, prompt: 10n, completion: 20n, ...details(), cost: 6n },
    ]);
  });
});
