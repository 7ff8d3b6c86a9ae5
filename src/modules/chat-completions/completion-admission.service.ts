import { Inject, Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { ApiKeyPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { inOneWrite } from 'src/common/redis/one-write';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { lazy } from 'src/common/lazy';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { imageFamiliesOf } from 'src/modules/billing/image-families';
import { MeteringService } from 'src/modules/billing/metering.service';
import { CompletionMeter, HeldTokens, TokenUsage } from 'src/modules/billing/metering.types';
import { estimateRequest } from 'src/modules/billing/token-estimator';
import { rawJsonOf } from 'src/common/http/json-body';
import { ChatRequest, outputTokenCap, validateChatRequest } from 'src/modules/chat-completions/chat-request.validator';
import { RelayedPrompt } from 'src/modules/chat-completions/relayed-prompt';
import { RequestLifetime } from 'src/modules/chat-completions/request-lifetime';
import { CatalogModel, CatalogService } from 'src/modules/models/catalog.service';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter.service';
import { EffectiveLimits, RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { LimitScope, RequestRateLimiter, RequestWindows } from 'src/modules/rate-limits/request-rate-limiter.service';
import { TokenAdmission, TokenRateLimiter } from 'src/modules/rate-limits/token-rate-limiter.service';
import { CancelSignal } from 'src/common/http/cancel-signal';
import { clientRequestIdOf, RequestTrace } from 'src/common/http/request-trace';
import { LOGGER } from 'src/common/logging/logger';
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

/** Chat completions' view of an admitted request. */
export interface ChatAdmission extends ValidatedRequest {
  chat: ChatRequest;
}

/** A chat completion let through. */
export type AdmittedCompletion = Admitted<ChatAdmission>;

/** The chat-completions validator step, the admission's default. */
export const admitChatRequest: RequestValidator<ChatAdmission> = (body, findModel, bodyLater) => {
  const chat = validateChatRequest(body, findModel);
  return { chat, model: chat.model, held: heldTokens(body as Record<string, unknown>, chat, bodyLater) };
};

/**
 * Whether a request may run, in this order: validate the body with the route's own step (400); in one
 * Redis script and round trip, count the request (429 requests per minute), its estimated tokens (429
 * tokens per minute) and hold its worst-case cost (403 insufficient_balance); then take a slot of
 * this process (503 when overloaded). A refusal at any step gives back what the earlier ones took
 * (a request that reached the counting stays counted).
 */
@Injectable()
export class CompletionAdmission {
  constructor(
    private readonly catalog: CatalogService,
    private readonly metering: MeteringService,
    private readonly concurrency: ConcurrencyLimiter,
    private readonly requestLimiter: RequestRateLimiter,
    private readonly tokenLimiter: TokenRateLimiter,
    private readonly policy: RateLimitPolicy,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Runs `relay` as an admitted request: a refused request never reaches it; a relay that fails gives
   * the hold back (unless usage was recorded); the slot and the deadline go whatever the outcome.
   * `validate` is the route's own step; chat completions' when absent.
   */
  run<T>(
    principal: ApiKeyPrincipal,
    request: { body: unknown; id: string },
    reply: FastifyReply,
    relay: (admitted: AdmittedCompletion) => Promise<T>,
  ): Promise<T>;
  run<T, V extends ValidatedRequest>(
    principal: ApiKeyPrincipal,
    request: { body: unknown; id: string },
    reply: FastifyReply,
    relay: (admitted: Admitted<V>) => Promise<T>,
    validate: RequestValidator<V>,
  ): Promise<T>;
  async run<T, V extends ValidatedRequest>(
    principal: ApiKeyPrincipal,
    request: { body: unknown; id: string },
    reply: FastifyReply,
    relay: (admitted: Admitted<V>) => Promise<T>,
    // The overloads pair the default (chat's step) with chat's relay only.
    validate = admitChatRequest as unknown as RequestValidator<V>,
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
  admit(principal: ApiKeyPrincipal, body: unknown, requestId: string, reply: FastifyReply): Promise<AdmittedCompletion>;
  admit<V extends ValidatedRequest>(
    principal: ApiKeyPrincipal,
    body: unknown,
    requestId: string,
    reply: FastifyReply,
    validate: RequestValidator<V>,
  ): Promise<Admitted<V>>;
  admit<V extends ValidatedRequest>(
    principal: ApiKeyPrincipal,
    body: unknown,
    requestId: string,
    reply: FastifyReply,
    validate = admitChatRequest as unknown as RequestValidator<V>,
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
    const scope: LimitScope = { accountId: principal.accountId, modelId: model.id, user: endUserOf(prompt.body) };
    const limits = this.policy.limitsFor(principal.accountId, model);
    if (principal.allowedModels && !principal.allowedModels.has(model.id)) {
      throw new ApiError(
        ErrorKind.ModelNotPermitted,
        `This API key may not use the model '${model.id}'. Allow it for the key in the console.`,
        'model',
      );
    }
    // From here on a hang-up (or the deadline) frees the slot, the queue place and the upstream call at once.
    const lifetime = new RequestLifetime(reply.raw, this.config.relay.maxRequestMs);
    const setHeaders = (headers: Record<string, string>) => void reply.headers(headers);
    const trace = new RequestTrace(requestId, clientRequestIdOf(reply.request.headers), this.logger);
    const counted = await this.count(scope, limits, held, { principal, trace, model }, setHeaders).catch(
      (error: unknown) => {
        lifetime.end();
        throw error;
      },
    );
    const { tokens, meter } = counted;
    const giveBack = async () => {
      if (await meter.release()) {
        tokens.settle(0);
      }
    };
    // After counting, so a request over its limits is refused at once instead of queueing for a slot.
    const releaseSlot = await this.concurrency
      .acquire(principal.accountId, lifetime.signal)
      .catch(async (error: unknown) => {
        lifetime.end();
        await giveBack();
        throw error;
      });
    setHeaders(tokens.headers);
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

  /**
   * Requests per minute, tokens per minute and the balance hold are counted by one Redis script in
   * the account's slot (BalanceGateService.admit): the first refusal in that order is the answer,
   * and a refused request leaves nothing to give back but its place in the request windows. A quick
   * bound refused by the tokens, the balance or the key's limit is counted again with the closer
   * one (HeldTokens.closer), in the token windows and the hold only: the request is counted already.
   */
  private async count(
    scope: LimitScope,
    limits: EffectiveLimits,
    held: HeldTokens,
    request: { principal: ApiKeyPrincipal; trace: RequestTrace; model: CatalogModel },
    setHeaders: (headers: Record<string, string>) => void,
  ): Promise<Counted> {
    const requestWindows = this.requestLimiter.windows(scope, limits);
    const progress = { requestCounted: false };
    const { closer } = held;
    const first = this.countOnce(scope, limits, held, request, {
      requestWindows,
      setHeaders,
      progress,
      final: !closer,
    });
    if (!closer) {
      return first;
    }
    return first.catch((error: unknown) => {
      if (!progress.requestCounted || !(error instanceof ApiError)) {
        throw error;
      }
      return this.countOnce(scope, limits, closer(), request, { progress, final: true });
    });
  }

  /** One admission script; without `requestWindows`, the request is not counted again. */
  private async countOnce(
    scope: LimitScope,
    limits: EffectiveLimits,
    held: HeldTokens,
    request: { principal: ApiKeyPrincipal; trace: RequestTrace; model: CatalogModel },
    counting: {
      requestWindows?: RequestWindows;
      setHeaders?: (headers: Record<string, string>) => void;
      progress: { requestCounted: boolean };
      /** Whether a token window's refusal is the answer (counted in the metrics), or may be tried again. */
      final: boolean;
    },
  ): Promise<Counted> {
    const { principal, trace, model } = request;
    const { requestWindows, setHeaders, progress, final } = counting;
    const tokenWindows = this.tokenLimiter.windows(scope, limits, held.promptTokens + held.completionTokens);
    // Usage is recorded long after admission; by then the token admission is known.
    const admitted: { tokens?: TokenAdmission } = {};
    const actual = (usage: TokenUsage) => usage.promptTokens + usage.completionTokens;
    const metered = {
      requestId: trace.id,
      clientRequestId: trace.clientId,
      accountId: principal.accountId,
      keyId: principal.keyId,
      keySpendLimit: principal.spendLimit,
      model,
      held,
    };
    // The script leaves in the turn's one write, with the other requests' of the same turn.
    const meter = await inOneWrite(this.redis, () =>
      this.metering.admit(metered, {
        windows: { requests: requestWindows ?? NOT_COUNTED_AGAIN, tokens: tokenWindows },
        verdict: (counts) => {
          if (requestWindows) {
            this.requestLimiter.verdict(requestWindows, counts.requests, setHeaders!);
            progress.requestCounted = true;
          }
          admitted.tokens = this.tokenLimiter.verdict(tokenWindows, counts.tokens, final);
        },
        takeCorrection: (usage) => admitted.tokens?.takeCorrection(actual(usage)) ?? null,
        correctNow: (usage) => admitted.tokens?.settle(actual(usage)),
      }),
    );
    return { tokens: admitted.tokens!, meter, held };
  }
}

/** What counting let through: the token admission, the meter, and the tokens held. */
interface Counted {
  tokens: TokenAdmission;
  meter: CompletionMeter;
  held: HeldTokens;
}

/** A request already counted in its request windows, counted again with a closer bound. */
const NOT_COUNTED_AGAIN = { keys: [], limits: [], ttlMs: 0 };

/** The end user the body names (`user`), whose own limits apply when the operator set them. */
function endUserOf(body: Record<string, unknown>): string | undefined {
  return typeof body.user === 'string' && body.user !== '' ? body.user : undefined;
}

/**
 * The most the upstream can bill: every billable field of the body, and the output cap over all
 * choices. A long prompt's text past the exact budget counts as its bytes at first; the one-pass
 * bound's closer count is made only if that is refused, or billed (HeldTokens.closer).
 */
function heldTokens(
  body: Record<string, unknown>,
  chat: ChatRequest,
  bodyLater: () => Record<string, unknown>,
): HeldTokens {
  const quick = chatHeldTokens(body, chat, true);
  if (quick.rough) {
    quick.held.closer = lazy(() => chatHeldTokens(bodyLater(), chat, false).held);
  }
  return quick.held;
}

function chatHeldTokens(body: Record<string, unknown>, chat: ChatRequest, restAsBytes: boolean) {
  const { promptTokens, predictionTokens, rough } = estimateRequest(body, {
    audioReferenceTokens: chat.model.maxOutputTokens,
    imageFamilies: imageFamiliesOf(chat.model.routes),
    restAsBytes,
    bodyBytes: rawJsonOf(body)?.bytes.length,
  });
  // Rejected prediction tokens are billed as output, on top of max_tokens, for every choice.
  const held: HeldTokens = { promptTokens, completionTokens: outputTokenCap(chat) + predictionTokens * chat.n };
  return { held, rough };
}
