import { ApiKeyPrincipal, AuthKind } from 'src/common/decorators/auth.decorators';
import { REDIS } from 'src/common/redis/redis.tokens';
import { MeteringService } from 'src/modules/billing/metering.service';
import { CompletionMeter, HeldTokens } from 'src/modules/billing/metering.types';
import { worstCaseCost } from 'src/modules/billing/pricing';
import { AdmissionCounts, BalanceGateService, HoldResult } from 'src/modules/ledger/balance-gate.service';
import { CatalogModel } from 'src/modules/models/catalog.service';
import { AdmissionGate, AdmissionTicket } from 'src/modules/relay/admission/admission-gate';
import { newTestService } from 'test/support/test-service';

const model: CatalogModel = {
  id: 'm',
  inputPrice: 1_000n,
  outputPrice: 2_000n,
  maxOutputTokens: 100,
  vision: false,
  kind: 'chat',
  rpm: 60,
  tpm: 10_000,
  created: 0,
  ownedBy: 'openai',
  routes: [],
};
const principal: ApiKeyPrincipal = {
  kind: AuthKind.ApiKey,
  accountId: 'acct',
  keyId: 'key',
  allowedModels: null,
  spendLimit: null,
  group: { priceMultiplierPpm: 1_000_000n, rpm: null, tpm: null },
};
const limits = { rpm: 60, tpm: 10_000, endUserRpm: null, endUserTpm: null };
const COUNTED: AdmissionCounts = {
  requests: { refusedBy: -1, hits: 1, resetMs: 60_000 },
  tokens: { refusedBy: -1, used: 20 },
};

function ticket(held: HeldTokens = { promptTokens: 10, completionTokens: 10 }): AdmissionTicket {
  return { principal, trace: { id: 'req_1', clientId: null }, model, held, limits, user: undefined };
}

/** A reply's header sink. */
function sink() {
  const headers: Record<string, string> = {};
  return { headers, sink: { headers: (more: Record<string, string>) => Object.assign(headers, more) } };
}

async function setup(...results: { hold: HoldResult; counts?: AdmissionCounts }[]) {
  // A Redis that is not connected: one-write batching is skipped, nothing else touches it here.
  const { sut, mock: deps } = await newTestService(AdmissionGate, {}, [[REDIS, { status: 'end' }]]);
  const meter = { record: jest.fn(), release: jest.fn().mockResolvedValue(true) } satisfies CompletionMeter;
  deps(MeteringService).meter.mockReturnValue(meter);
  for (const { hold, counts } of results) {
    deps(BalanceGateService).admit.mockResolvedValueOnce({ hold, counts: counts ?? COUNTED });
  }
  return { sut, deps, meter };
}

describe(AdmissionGate.name, () => {
  it('should count the request, its tokens and its hold in one script, and answer with the meter and the headers', async () => {
    const { sut, deps, meter } = await setup({ hold: { outcome: 'held' } });
    const { headers, sink: reply } = sink();

    const verdict = await sut.admit(ticket(), reply);

    expect(deps(BalanceGateService).admit).toHaveBeenCalledTimes(1);
    const [accountId, requestId, amount, key, counters] = deps(BalanceGateService).admit.mock.calls[0];
    expect({ accountId, requestId, key }).toEqual({
      accountId: 'acct',
      requestId: 'req_1',
      key: { id: 'key', spendLimit: null },
    });
    // The hold is billing's worst case for the estimate; the token windows count the same estimate.
    expect(amount).toBe(worstCaseCost(model, 10, 10));
    expect(counters.requests).toMatchObject({ limits: [60] });
    expect(counters.tokens).toMatchObject({ limits: [10_000], amount: 20 });
    expect(headers).toMatchObject({ 'x-ratelimit-limit-requests': '60', 'x-ratelimit-remaining-requests': '59' });
    expect(verdict).toEqual({
      meter,
      held: { promptTokens: 10, completionTokens: 10 },
      headers: expect.objectContaining({ 'x-ratelimit-limit-tokens': '10000', 'x-ratelimit-remaining-tokens': '9980' }),
    });
    // The meter corrects the token windows it is given, once usage is known.
    expect(deps(MeteringService).meter).toHaveBeenCalledWith(
      expect.objectContaining({ requestId: 'req_1', accountId: 'acct', keyId: 'key', model }),
      amount,
      expect.objectContaining({ keys: counters.tokens.keys, amount: 20 }),
    );
  });

  it('should refuse a request over its requests per minute with the 429 and its headers, and meter nothing', async () => {
    const full = { requests: { refusedBy: 0, hits: 60, resetMs: 30_000 }, tokens: { refusedBy: -1, used: 0 } };
    const { sut, deps } = await setup({ hold: { outcome: 'counterRefused' }, counts: full });
    const { headers, sink: reply } = sink();

    await expect(sut.admit(ticket(), reply)).rejects.toMatchObject({ status: 429 });

    expect(headers).toMatchObject({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '30s' });
    expect(deps(MeteringService).meter).not.toHaveBeenCalled();
  });

  it('should refuse what the balance cannot cover with a 403 that says what is available', async () => {
    const { sut, deps } = await setup({ hold: { outcome: 'insufficient', available: 5n } });

    await expect(sut.admit(ticket(), sink().sink)).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining('is available'),
    });

    expect(deps(MeteringService).meter).not.toHaveBeenCalled();
  });

  it('should load the balance when Redis has no snapshot of it, then count once', async () => {
    const { sut, deps } = await setup({ hold: { outcome: 'unknown' } }, { hold: { outcome: 'held' } });

    await sut.admit(ticket(), sink().sink);

    expect(deps(MeteringService).loadBalance).toHaveBeenCalledWith('acct');
    expect(deps(BalanceGateService).admit).toHaveBeenCalledTimes(2);
  });

  it('should count a quick bound refused by its tokens again with the closer one, the request only once', async () => {
    const overTokens = { requests: COUNTED.requests, tokens: { refusedBy: 0, used: 9_990 } };
    const { sut, deps } = await setup(
      { hold: { outcome: 'counterRefused' }, counts: overTokens },
      { hold: { outcome: 'held' } },
    );
    const closer = { promptTokens: 3, completionTokens: 10 };

    const verdict = await sut.admit(
      ticket({ promptTokens: 500, completionTokens: 10, closer: () => closer }),
      sink().sink,
    );

    const [first, second] = deps(BalanceGateService).admit.mock.calls.map((call) => call[4]);
    expect(first.tokens.amount).toBe(510);
    expect(second.requests.keys).toEqual([]);
    expect(second.tokens.amount).toBe(13);
    expect(verdict.held).toBe(closer);
  });

  it('should answer 503 when the hold cannot be taken, relaying nothing', async () => {
    const { sut, deps } = await setup();
    deps(BalanceGateService).admit.mockRejectedValue(new Error('connection lost'));

    await expect(sut.admit(ticket(), sink().sink)).rejects.toMatchObject({
      status: 503,
      headers: { 'retry-after': '10' },
    });
  });
});
