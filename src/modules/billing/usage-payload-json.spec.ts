import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { USAGE_PAYLOAD_FIELDS, usagePayloadJson } from 'src/modules/billing/usage-payload-json';

/** A payload with its fields in the order the metering service builds them, as JSON.stringify would see it. */
function payload(overrides: Partial<SettleCompletionPayload> = {}): SettleCompletionPayload {
  const base: SettleCompletionPayload = {
    requestId: 'req_0123456789abcdef',
    accountId: '5f1c2e9a-1b2c-4d5e-8f90-123456789abc',
    keyId: '7a1c2e9a-1b2c-4d5e-8f90-123456789abc',
    modelId: 'gpt-4o-mini',
    channelId: 'c0a8e5f2-0000-4000-8000-000000000001',
    inputPrice: '150000000',
    outputPrice: '600000000',
    cachedInputPrice: '75000000',
    cacheWriteInputPrice: '187500000',
    priceMultiplierPpm: '800000',
    promptTokens: 1234,
    completionTokens: 56,
    cachedTokens: 1024,
    cacheWriteTokens: 0,
    reasoningTokens: 12,
    usageSource: 'upstream',
    status: 'completed',
    upstreamLatencyMs: 87,
    createdAt: '2026-11-30T00:41:07.123Z',
    recordedAtMs: 1_795_999_267_456,
    clientRequestId: 'app-7:Trace_42',
    providerRequestId: 'req_abc',
    firstByteMs: 240,
  };
  return Object.assign(base, overrides);
}

const STRANGE_TEXTS = [
  '',
  'a "quoted" id',
  'back\\slash',
  'line\nbreak\ttab\u0000nul\u001f',
  'emoji 🙂 and é',
  'lone \ud800 high',
  'lone \udc00 low',
  'separators \u2028\u2029',
  'ünïcödé-модель',
];

describe('usagePayloadJson', () => {
  it('writes the record exactly as JSON.stringify does, every field set', () => {
    expect(usagePayloadJson(payload())).toBe(JSON.stringify(payload()));
  });

  it('leaves out the optional fields that are undefined, as JSON.stringify does', () => {
    const bare = payload({
      cachedInputPrice: undefined,
      cacheWriteInputPrice: undefined,
      cachedTokens: undefined,
      cacheWriteTokens: undefined,
      reasoningTokens: undefined,
      recordedAtMs: undefined,
      clientRequestId: undefined,
      providerRequestId: undefined,
      firstByteMs: undefined,
    });
    expect(usagePayloadJson(bare)).toBe(JSON.stringify(bare));
    expect(Object.keys(JSON.parse(usagePayloadJson(bare)) as object)).not.toContain('cachedTokens');
  });

  it('escapes any text a client or an operator could have put in an id', () => {
    for (const strange of STRANGE_TEXTS) {
      const record = payload({ requestId: strange, modelId: strange, channelId: strange, keyId: strange });
      record.clientRequestId = strange;
      record.providerRequestId = strange;
      expect(usagePayloadJson(record)).toBe(JSON.stringify(record));
    }
  });

  it('writes numbers as JSON does, non-finite ones as null', () => {
    for (const value of [0, -0, 7, 2 ** 53, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const record = payload({ promptTokens: value, upstreamLatencyMs: value, cachedTokens: value });
      expect(usagePayloadJson(record)).toBe(JSON.stringify(record));
    }
  });

  it('agrees with JSON.stringify on random records', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(values: T[]) => values[Math.floor(random() * values.length)];
    for (let i = 0; i < 500; i++) {
      const record = payload({
        requestId: pick(STRANGE_TEXTS) + String(i),
        cachedInputPrice: pick([undefined, '0', '75000000']),
        cacheWriteInputPrice: pick([undefined, '187500000']),
        promptTokens: Math.floor(random() * 1e6),
        cachedTokens: pick([undefined, 0, Math.floor(random() * 1e5)]),
        cacheWriteTokens: pick([undefined, 3]),
        reasoningTokens: pick([undefined, 0, 99]),
        usageSource: pick(['upstream', 'estimated'] as const),
        status: pick(['completed', 'client_aborted', 'upstream_broken'] as const),
        recordedAtMs: pick([undefined, Date.now()]),
        clientRequestId: pick([undefined, 'client-1']),
        providerRequestId: pick([undefined, pick(STRANGE_TEXTS)]),
        firstByteMs: pick([undefined, 0, 240]),
      });
      expect(usagePayloadJson(record)).toBe(JSON.stringify(record));
    }
  });

  it('writes every field of the payload type', () => {
    expect(Object.keys(JSON.parse(usagePayloadJson(payload())) as object)).toEqual(Object.keys(USAGE_PAYLOAD_FIELDS));
  });
});
