import { EventEmitter } from 'node:events';
import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal, AuthKind } from 'src/common/decorators/auth.decorators';
import { ApiError, clientClosed, ErrorKind } from 'src/common/errors/api-error';
import { REDIS } from 'src/common/redis/redis.tokens';
import { MeteringService } from 'src/modules/billing/metering.service';
import { CompletionMeter } from 'src/modules/billing/metering.types';
import { AdmittedCompletion, CompletionAdmission } from 'src/modules/chat-completions/completion-admission.service';
import { CatalogModel, CatalogService } from 'src/modules/models/catalog.service';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter.service';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { RequestRateLimiter } from 'src/modules/rate-limits/request-rate-limiter.service';
import { TokenRateLimiter } from 'src/modules/rate-limits/token-rate-limiter.service';
import { newTestService } from 'test/support/test-service';
import { CancelSignal } from 'src/common/http/cancel-signal';

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
};
const body = { model: 'm', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 10, user: 'u1' };
const limits = { rpm: 60, tpm: 10_000, endUserRpm: null, endUserTpm: null };
const tooMany = () => new ApiError(ErrorKind.RateLimited, 'too many');
const scope = { accountId: 'acct', modelId: 'm', user: 'u1' };
const requestWindows = { scope, keys: ['rl'], limits: [60], ttlMs: 60_000 };
const tokenWindows = { scope, keys: ['tpm'], limits: [10_000], amount: 0, ttlMs: 60_000, resetMs: 1_000 };
const counted = { requests: { refusedBy: -1, hits: 1, resetMs: 60_000 }, tokens: { refusedBy: -1, used: 20 } };

/** A reply whose socket can be hung up, and whose headers are collected. */
function fakeReply() {
  const raw = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false });
  const headers: Record<string, string> = {};
  const reply = {
    raw,
    request: { headers: { 'x-request-id': 'client-1' } },
    headers: jest.fn((more: Record<string, string>) => Object.assign(headers, more)),
  };
  return { reply: reply as unknown as FastifyReply, raw, headers };
}

async function setup() {
  // A Redis that is not connected: one-write batching is skipped, nothing else touches it here.
  const { sut, mock: deps } = await newTestService(CompletionAdmission, {}, [[REDIS, { status: 'end' }]]);
  const meter = { record: jest.fn(), release: jest.fn().mockResolvedValue(true) } satisfies CompletionMeter;
  const settle = jest.fn();
  const releaseSlot = jest.fn();
  deps(CatalogService).get.mockImplementation((id) => (id === 'm' ? model : undefined));
  deps(RateLimitPolicy).limitsFor.mockReturnValue(limits);
  deps(RequestRateLimiter).windows.mockReturnValue(requestWindows);
  deps(TokenRateLimiter).windows.mockImplementation((scope, _limits, amount) => ({ ...tokenWindows, scope, amount }));
  deps(TokenRateLimiter).verdict.mockReturnValue({
    settle,
    takeCorrection: jest.fn(),
    headers: { 'x-ratelimit-limit-tokens': '10000' },
  });
  // Like the real one: the windows' verdict first, then the hold's outcome.
  deps(MeteringService).admit.mockImplementation((_metered, counters) => {
    counters?.verdict(counted);
    return Promise.resolve(meter);
  });
  deps(ConcurrencyLimiter).acquire.mockResolvedValue(releaseSlot);
  return { sut, deps, meter, settle, releaseSlot };
}

describe(CompletionAdmission.name, () => {
  it('should count, hold and take a slot for a valid request, and hand back what the relay needs', async () => {
    const { sut, deps, meter, releaseSlot } = await setup();
    const { reply, headers } = fakeReply();

    const admitted = await sut.admit(principal, body, 'req_1', reply);

    expect(admitted).toMatchObject({ chat: { model, maxTokens: 10, n: 1 }, limits, meter });
    expect(admitted.prompt.body).toBe(body);
    expect(deps(RequestRateLimiter).windows).toHaveBeenCalledWith(scope, limits);
    const [, , estimate] = deps(TokenRateLimiter).windows.mock.calls[0];
    const [metered, counters] = deps(MeteringService).admit.mock.calls[0];
    // Ours keys the bill; the client's own X-Request-Id rides along beside it.
    expect(metered).toMatchObject({ requestId: 'req_1', clientRequestId: 'client-1', accountId: 'acct', keyId: 'key' });
    expect(admitted.trace).toMatchObject({ id: 'req_1', clientId: 'client-1' });
    // The windows are counted in the hold's own step, and their verdict read from its counts.
    expect(counters?.windows).toEqual({ requests: requestWindows, tokens: { ...tokenWindows, amount: estimate } });
    expect(deps(RequestRateLimiter).verdict).toHaveBeenCalledWith(
      requestWindows,
      counted.requests,
      expect.any(Function),
    );
    // A short prompt has no closer bound to try: its refusal would be the answer.
    expect(deps(TokenRateLimiter).verdict).toHaveBeenCalledWith(expect.anything(), counted.tokens, true);
    // The hold covers the prompt and the output cap; the tokens per minute count the same.
    expect(metered.held.completionTokens).toBe(10);
    expect(estimate).toBe(metered.held.promptTokens + 10);
    expect(headers).toEqual({ 'x-ratelimit-limit-tokens': '10000' });

    expect(releaseSlot).not.toHaveBeenCalled();
    admitted.release();
    expect(releaseSlot).toHaveBeenCalledTimes(1);
  });

  it('should refuse an invalid body before counting or holding anything', async () => {
    const { sut, deps } = await setup();

    const unknownModel = { ...body, model: 'unknown' };
    await expect(sut.admit(principal, unknownModel, 'req_1', fakeReply().reply)).rejects.toMatchObject({
      status: 400,
      param: 'model',
    });

    expect(deps(RequestRateLimiter).windows).not.toHaveBeenCalled();
    expect(deps(MeteringService).admit).not.toHaveBeenCalled();
    expect(deps(ConcurrencyLimiter).acquire).not.toHaveBeenCalled();
  });

  it('should answer the requests-per-minute refusal, with nothing held to give back', async () => {
    const { sut, deps, meter, settle } = await setup();
    deps(RequestRateLimiter).verdict.mockImplementation(() => {
      throw tooMany();
    });

    await expect(sut.admit(principal, body, 'req_1', fakeReply().reply)).rejects.toMatchObject({ message: 'too many' });

    expect(deps(TokenRateLimiter).verdict).not.toHaveBeenCalled();
    expect(settle).not.toHaveBeenCalled();
    expect(meter.release).not.toHaveBeenCalled();
    expect(deps(ConcurrencyLimiter).acquire).not.toHaveBeenCalled();
  });

  it('should answer a balance refusal with no slot taken and no tokens to give back (the script counts them only with the hold)', async () => {
    const { sut, deps, settle } = await setup();
    deps(MeteringService).admit.mockRejectedValue(new ApiError(ErrorKind.InsufficientBalance, 'no money'));

    await expect(sut.admit(principal, body, 'req_1', fakeReply().reply)).rejects.toMatchObject({ status: 403 });

    expect(settle).not.toHaveBeenCalled();
    expect(deps(ConcurrencyLimiter).acquire).not.toHaveBeenCalled();
  });

  it('should give the hold and the tokens back when no slot comes', async () => {
    const { sut, deps, meter, settle } = await setup();
    deps(ConcurrencyLimiter).acquire.mockRejectedValue(new ApiError(ErrorKind.Overloaded, 'busy'));

    await expect(sut.admit(principal, body, 'req_1', fakeReply().reply)).rejects.toMatchObject({ status: 503 });

    expect(meter.release).toHaveBeenCalled();
    expect(settle).toHaveBeenCalledWith(0);
  });

  it('should abort the admission signal when the client hangs up while it waits for a slot', async () => {
    const { sut, deps } = await setup();
    const { reply, raw } = fakeReply();
    deps(ConcurrencyLimiter).acquire.mockImplementation(
      (_account, signal: CancelSignal) =>
        new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    );

    const admission = sut.admit(principal, body, 'req_1', reply);
    await new Promise(setImmediate);
    raw.emit('close');

    await expect(admission).rejects.toMatchObject({ status: clientClosed().status });
  });

  it('should keep the tokens counted when usage was recorded before the relay failed', async () => {
    const { sut, meter, settle } = await setup();
    meter.release.mockResolvedValue(false);
    const admitted = await sut.admit(principal, body, 'req_1', fakeReply().reply);

    await admitted.giveBack();
    admitted.release();

    expect(settle).not.toHaveBeenCalled();
  });

  describe('run', () => {
    const request = { body, id: 'req_1' };

    it('should relay once admitted, keep the hold, and free the slot after the relay', async () => {
      const { sut, meter, releaseSlot } = await setup();
      const relay = jest.fn((admitted: AdmittedCompletion) => {
        expect(releaseSlot).not.toHaveBeenCalled();
        expect(admitted.prompt.body).toBe(body);
        return Promise.resolve('completed');
      });

      await expect(sut.run(principal, request, fakeReply().reply, relay)).resolves.toBe('completed');

      expect(relay).toHaveBeenCalledWith(expect.objectContaining({ meter }));
      expect(meter.release).not.toHaveBeenCalled();
      expect(releaseSlot).toHaveBeenCalledTimes(1);
    });

    it('should give the hold and the counted tokens back when the relay fails, then free the slot', async () => {
      const { sut, meter, settle, releaseSlot } = await setup();
      const failure = new Error('upstream gone');
      const order: string[] = [];
      meter.release.mockImplementation(() => {
        order.push('give back');
        return Promise.resolve(true);
      });
      releaseSlot.mockImplementation(() => order.push('slot'));

      await expect(sut.run(principal, request, fakeReply().reply, () => Promise.reject(failure))).rejects.toBe(failure);

      expect(settle).toHaveBeenCalledWith(0);
      expect(order).toEqual(['give back', 'slot']);
    });

    it('should never start the relay of a refused request', async () => {
      const { sut, deps } = await setup();
      deps(RequestRateLimiter).verdict.mockImplementation(() => {
        throw tooMany();
      });
      const relay = jest.fn();

      await expect(sut.run(principal, request, fakeReply().reply, relay)).rejects.toMatchObject({ status: 429 });

      expect(relay).not.toHaveBeenCalled();
    });
  });
});
