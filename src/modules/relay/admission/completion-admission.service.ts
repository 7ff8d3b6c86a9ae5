import { Inject, Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { CompletionMeter, HeldTokens } from 'src/modules/billing/metering.types';
import { CatalogModel, CatalogService } from 'src/modules/models/catalog.service';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter.service';
import { EffectiveLimits, RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { AdmissionGate } from 'src/modules/relay/admission/admission-gate';
import { RelayedPrompt } from 'src/modules/relay/admission/relayed-prompt';
import { RequestLifetime } from 'src/modules/relay/admission/request-lifetime';
import { CancelSignal } from 'src/common/http/cancel-signal';
import { clientRequestIdOf, RequestTrace } from 'src/common/http/request-trace';
import { LOGGER } from 'src/common/logging/logger';
import { requestSpanOf } from 'src/common/telemetry/request-spans';
import { failureOf, TraceSpan } from 'src/common/telemetry/tracing';
import { Logger } from 'pino';

/** What a route's validator step hands the admission: the model asked for and the most the upstream can bill. */
export interface ValidatedRequest {
  model: CatalogModel;
  held: HeldTokens;
}

/**
 * A route's own validation (chat completions, embeddings): checks the body against the catalog and
 * throws the 400 the client should see; returns what the admission counts and holds, plus whatever
 * the route's relay needs. A count made later (a closer bound) reads the body through `bodyLater`,
 * never through `body` itself, which a long stream drops once it reached the client (RelayedPrompt).
 */
export type RequestValidator<V extends ValidatedRequest> = (
  body: unknown,
  findModel: (id: string) => CatalogModel | undefined,
  bodyLater: () => Record<string, unknown>,
) => V;

/** A request let through: the route's validated view, and what the relay needs to run and end it. */
export type Admitted<V extends ValidatedRequest> = V & {
  /**
   * The body as validated, relayed to the upstream (`prompt.body`). Once no route is left to try (a
   * stream reached its client) `prompt.dropParsed()` lets the parsed copy go, its bytes staying for a
   * late count; a caller must hold no reference of its own to the body past that.
   */
  prompt: RelayedPrompt;
  limits: EffectiveLimits;
  meter: CompletionMeter;
  /** Aborts when the client hangs up or the request's deadline passes; its reason is the error to answer. */
  signal: CancelSignal;
  /** Our id, the client's, and the logger that stamps them on every line. */
  trace: RequestTrace;
  /** The relay failed: the hold and the counted tokens go back, unless usage was recorded. */
  giveBack(): Promise<void>;
  /** The relay is over, whatever its outcome: the slot and the deadline go. */
  release(): void;
};

/**
 * Whether a request may run, in this order: validate the body with the surface's own step (400); the
 * key's model list (403); the admission's one script and verdict (AdmissionGate: 429 requests per
 * minute, 429 tokens per minute, 403 insufficient_balance or key_spend_limit_reached); then take a
 * slot of this process (503 when overloaded). A refusal at any step gives back what the earlier ones took
 * (a request that reached the counting stays counted).
 */
@Injectable()
export class CompletionAdmission {
  constructor(
    private readonly catalog: CatalogService,
    private readonly gate: AdmissionGate,
    private readonly concurrency: ConcurrencyLimiter,
    private readonly policy: RateLimitPolicy,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Runs `relay` as an admitted request: a refused request never reaches it; a relay that fails gives
   * the hold back (unless usage was recorded); the slot and the deadline go whatever the outcome.
   * `validate` is the surface's own step: what it checks, counts and holds, and the view its relay gets.
   */
  async run<T, V extends ValidatedRequest>(
    principal: ApiKeyPrincipal,
    request: { body: unknown; id: string },
    reply: FastifyReply,
    relay: (admitted: Admitted<V>) => Promise<T>,
    validate: RequestValidator<V>,
  ): Promise<T> {
    const admitted = await this.admitPrompt(principal, new RelayedPrompt(request), request.id, reply, validate);
    try {
      return await relay(admitted);
    } catch (error) {
      await admitted.giveBack();
      throw error;
    } finally {
      admitted.release();
    }
  }

  /** `reply` receives the rate-limit headers (a refusal carries them too) and tells when the client hangs up. */
  admit<V extends ValidatedRequest>(
    principal: ApiKeyPrincipal,
    body: unknown,
    requestId: string,
    reply: FastifyReply,
    validate: RequestValidator<V>,
  ): Promise<Admitted<V>> {
    return this.admitPrompt(principal, new RelayedPrompt({ body }), requestId, reply, validate);
  }

  private async admitPrompt<V extends ValidatedRequest>(
    principal: ApiKeyPrincipal,
    prompt: RelayedPrompt,
    requestId: string,
    reply: FastifyReply,
    validate: RequestValidator<V>,
  ): Promise<Admitted<V>> {
    const validated = validate(
      prompt.body,
      (id) => this.catalog.get(id),
      () => prompt.body,
    );
    const { model, held } = validated;
    const limits = this.policy.limitsFor(principal.accountId, model, principal.group);
    if (principal.allowedModels && !principal.allowedModels.has(model.id)) {
      throw new ApiError(
        ErrorKind.ModelNotPermitted,
        `This API key may not use the model '${model.id}'. Allow it for the key in the console.`,
        'model',
      );
    }
    // From here on a hang-up (or the deadline) frees the slot, the queue place and the upstream call at once.
    const lifetime = new RequestLifetime(reply.raw, this.config.relay.maxRequestMs);
    const span = requestSpanOf(reply.request);
    const trace = new RequestTrace(requestId, clientRequestIdOf(reply.request.headers), this.logger, span);
    const admission = span === null ? null : admissionSpan(span, trace, model.id, principal.accountId);
    const ticket = { principal, trace, model, held, limits, user: endUserOf(prompt.body) };
    const counted = await this.gate.admit(ticket, reply).catch((error: unknown) => {
      lifetime.end();
      refused(admission, error);
      throw error;
    });
    const { meter } = counted;
    // The hold, and the tokens counted with it, go back unless usage was recorded (MeteringService.meter).
    const giveBack = async () => {
      await meter.release();
    };
    // After counting, so a request over its limits is refused at once instead of queueing for a slot.
    const releaseSlot = await this.concurrency
      .acquire(principal.accountId, lifetime.signal)
      .catch(async (error: unknown) => {
        lifetime.end();
        refused(admission, error);
        await giveBack();
        throw error;
      });
    admission?.end();
    reply.headers(counted.headers);
    // Not `{ ...validated, held, … }`, which costs microseconds on Node 20 (src/common/with-fields.ts);
    // the validated view is typed by the route, which withFields's return type would not keep.
    return Object.assign({}, validated, {
      held: counted.held,
      prompt,
      limits,
      meter,
      signal: lifetime.signal,
      trace,
      giveBack,
      release: () => {
        lifetime.end();
        releaseSlot();
      },
    });
  }
}

/** The end user the body names (`user`), whose own limits apply when the operator set them. */
function endUserOf(body: Record<string, unknown>): string | undefined {
  return typeof body.user === 'string' && body.user !== '' ? body.user : undefined;
}

/** The request's model and account on its span, and the admission's own span inside it (counting, the hold, the slot). */
function admissionSpan(request: TraceSpan, trace: RequestTrace, modelId: string, accountId: string): TraceSpan {
  request.set(
    trace.clientId === null
      ? { 'gen_ai.request.model': modelId, 'gateway.account_id': accountId }
      : {
          'gen_ai.request.model': modelId,
          'gateway.account_id': accountId,
          'gateway.client_request_id': trace.clientId,
        },
  );
  return request.child('admission');
}

function refused(admission: TraceSpan | null, error: unknown): void {
  admission?.fail(failureOf(error));
  admission?.end();
}
