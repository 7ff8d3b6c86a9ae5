import { EventEmitter } from 'node:events';
import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal, AuthKind } from 'src/common/decorators/auth.decorators';
import { ApiError, clientClosed, ErrorKind } from 'src/common/errors/api-error';
import { CompletionMeter } from 'src/modules/billing/metering.types';
import { AdmissionGate } from 'src/modules/relay/admission/admission-gate';
import { CompletionAdmission } from 'src/modules/relay/admission/completion-admission.service';
import { AdmittedCompletion, admitChatRequest } from 'src/modules/relay/chat-request/chat-admission';
import { CatalogModel, CatalogService } from 'src/modules/models/catalog.service';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter.service';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
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
  group: { priceMultiplierPpm: 1_000_000n, rpm: null, tpm: null },
};
const body = { model: 'm', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 10, user: 'u1' };
const limits = { rpm: 60, tpm: 10_000, endUserRpm: null, endUserTpm: null };
const tooMany = () => new ApiError(ErrorKind.RateLimited, 'too many');
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
  const { sut, mock: deps } = await newTestService(CompletionAdmission);
  const meter = { record: jest.fn(), release: jest.fn().mockResolvedValue(true) } satisfies CompletionMeter;
  const releaseSlot = jest.fn();
  deps(CatalogService).get.mockImplementation((id) => (id === 'm' ? model : undefined));
  deps(RateLimitPolicy).limitsFor.mockReturnValue(limits);
  deps(AdmissionGate).admit.mockImplementation((ticket) =>
    Promise.resolve({ meter, headers: { 'x-ratelimit-limit-tokens': '10000' }, held: ticket.held }),
  );
  deps(ConcurrencyLimiter).acquire.mockResolvedValue(releaseSlot);
  return { sut, deps, meter, releaseSlot };
}

describe(CompletionAdmission.name, () => {
  it('should count, hold and take a slot for a valid request, and hand back what the relay needs', async () => {
    const { sut, deps, meter, releaseSlot } = await setup();
    const { reply, headers } = fakeReply();

    const admitted = await sut.admit(principal, body, 'req_1', reply, admitChatRequest);

    expect(admitted).toMatchObject({ chat: { model, maxTokens: 10, n: 1 }, limits, meter });
    expect(admitted.prompt.body).toBe(body);
    // The admission gets the data it counts and holds with: the limits, the end user, the estimate.
    const [ticket, sink] = deps(AdmissionGate).admit.mock.calls[0];
    expect(ticket).toMatchObject({ principal, model, limits, user: 'u1' });
    // Ours keys the bill; the client's own X-Request-Id rides along beside it.
    expect(ticket.trace).toMatchObject({ id: 'req_1', clientId: 'client-1' });
    expect(admitted.trace).toMatchObject({ id: 'req_1', clientId: 'client-1' });
    expect(sink).toBe(reply);
    // The hold covers the prompt and the output cap.
    expect(ticket.held.completionTokens).toBe(10);
    expect(headers).toEqual({ 'x-ratelimit-limit-tokens': '10000' });

    expect(releaseSlot).not.toHaveBeenCalled();
    admitted.release();
    expect(releaseSlot).toHaveBeenCalledTimes(1);
  });

  it('should refuse an invalid body before counting or holding anything', async () => {
    const { sut, deps } = await setup();

    const unknownModel = { ...body, model: 'unknown' };
    await expect(
      sut.admit(principal, unknownModel, 'req_1', fakeReply().reply, admitChatRequest),
    ).rejects.toMatchObject({
      status: 400,
      param: 'model',
    });

    expect(deps(AdmissionGate).admit).not.toHaveBeenCalled();
    expect(deps(ConcurrencyLimiter).acquire).not.toHaveBeenCalled();
  });

  it('should answer the requests-per-minute refusal, with nothing held to give back', async () => {
    const { sut, deps, meter } = await setup();
    deps(AdmissionGate).admit.mockRejectedValue(tooMany());

    await expect(sut.admit(principal, body, 'req_1', fakeReply().reply, admitChatRequest)).rejects.toMatchObject({
      message: 'too many',
    });

    expect(meter.release).not.toHaveBeenCalled();
    expect(deps(ConcurrencyLimiter).acquire).not.toHaveBeenCalled();
  });

  it('should answer a balance refusal with no slot taken and no tokens to give back (the script counts them only with the hold)', async () => {
    const { sut, deps, meter } = await setup();
    deps(AdmissionGate).admit.mockRejectedValue(new ApiError(ErrorKind.InsufficientBalance, 'no money'));

    await expect(sut.admit(principal, body, 'req_1', fakeReply().reply, admitChatRequest)).rejects.toMatchObject({
      status: 403,
    });

    expect(meter.release).not.toHaveBeenCalled();
    expect(deps(ConcurrencyLimiter).acquire).not.toHaveBeenCalled();
  });

  it('should give the hold and the tokens back when no slot comes', async () => {
    const { sut, deps, meter } = await setup();
    deps(ConcurrencyLimiter).acquire.mockRejectedValue(new ApiError(ErrorKind.Overloaded, 'busy'));

    await expect(sut.admit(principal, body, 'req_1', fakeReply().reply, admitChatRequest)).rejects.toMatchObject({
      status: 503,
    });

    // The meter gives back the hold and the tokens counted with it (MeteringService.meter).
    expect(meter.release).toHaveBeenCalledTimes(1);
  });

  it('should abort the admission signal when the client hangs up while it waits for a slot', async () => {
    const { sut, deps } = await setup();
    const { reply, raw } = fakeReply();
    deps(ConcurrencyLimiter).acquire.mockImplementation(
      (_account, signal: CancelSignal) =>
        new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    );

    const admission = sut.admit(principal, body, 'req_1', reply, admitChatRequest);
    await new Promise(setImmediate);
    raw.emit('close');

    await expect(admission).rejects.toMatchObject({ status: clientClosed().status });
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

      await expect(sut.run(principal, request, fakeReply().reply, relay, admitChatRequest)).resolves.toBe('completed');

      expect(relay).toHaveBeenCalledWith(expect.objectContaining({ meter }));
      expect(meter.release).not.toHaveBeenCalled();
      expect(releaseSlot).toHaveBeenCalledTimes(1);
    });

    it('should give the hold and the counted tokens back when the relay fails, then free the slot', async () => {
      const { sut, meter, releaseSlot } = await setup();
      const failure = new Error('upstream gone');
      const order: string[] = [];
      meter.release.mockImplementation(() => {
        order.push('give back');
        return Promise.resolve(true);
      });
      releaseSlot.mockImplementation(() => order.push('slot'));

      await expect(
        sut.run(principal, request, fakeReply().reply, () => Promise.reject(failure), admitChatRequest),
      ).rejects.toBe(failure);

      expect(order).toEqual(['give back', 'slot']);
    });

    it('should never start the relay of a refused request', async () => {
      const { sut, deps } = await setup();
      deps(AdmissionGate).admit.mockRejectedValue(tooMany());
      const relay = jest.fn();

      await expect(sut.run(principal, request, fakeReply().reply, relay, admitChatRequest)).rejects.toMatchObject({
        status: 429,
      });

      expect(relay).not.toHaveBeenCalled();
    });
  });
});
