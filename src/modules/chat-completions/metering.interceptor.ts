import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import Redis from 'ioredis';
import { catchError, finalize, from, mergeMap, Observable, throwError } from 'rxjs';
import { ApiKeyPrincipal, AuthenticatedRequest } from 'src/common/decorators/auth.decorators';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { inOneWrite } from 'src/common/redis/one-write';
import { REDIS } from 'src/common/redis/redis.tokens';
import { imageFamiliesOf } from 'src/modules/billing/image-families';
import { AdmissionEstimate, MeteringService } from 'src/modules/billing/metering.service';
import { estimateRequest } from 'src/modules/billing/token-estimator';
import { ChatCompletionsService } from 'src/modules/chat-completions/chat-completions.service';
import { ChatRequest, outputTokenCap } from 'src/modules/chat-completions/chat-request.validator';
import { CompletionMeter } from 'src/modules/chat-completions/completion-meter';
import { RequestLifetime } from 'src/modules/chat-completions/request-lifetime';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter';
import { LimitedRequest, requestKeys } from 'src/modules/rate-limits/gateway-throttler.guard';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { RequestRateLimiter } from 'src/modules/rate-limits/request-rate-limiter';
import { TokenAdmission, TokenRateLimiter } from 'src/modules/rate-limits/token-rate-limiter';
import { TokenUsage } from 'src/modules/chat-completions/upstream/provider-adapter';

export type CompletionRequest = AuthenticatedRequest & {
  completion?: { chat: ChatRequest; meter: CompletionMeter; signal: AbortSignal };
};

/**
 * Admission and metering around the completion route, after the throttler guard resolved the
 * requests-per-minute windows: validate; count the request (429), the estimated tokens per minute
 * (429) and hold the worst-case cost (403 insufficient_balance), all three in one Redis round trip;
 * take a slot of this process (503 when overloaded). The relay then records usage through the
 * meter, which also corrects the token count; an error before that gives the hold and the tokens back.
 */
@Injectable()
export class MeteringInterceptor implements NestInterceptor {
  constructor(
    private readonly chats: ChatCompletionsService,
    private readonly metering: MeteringService,
    private readonly concurrency: ConcurrencyLimiter,
    private readonly requestLimiter: RequestRateLimiter,
    private readonly tokenLimiter: TokenRateLimiter,
    private readonly policy: RateLimitPolicy,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<CompletionRequest>();
    const chat = this.chats.prepare(request.body);
    const principal = request.principal as ApiKeyPrincipal;
    const body = request.body as Record<string, unknown>;
    const { promptTokens, predictionTokens } = estimateRequest(body, {
      audioReferenceTokens: chat.model.maxOutputTokens,
      imageFamilies: imageFamiliesOf(chat.model.routes),
    });
    // Rejected prediction tokens are billed as output, on top of max_tokens, for every choice.
    const held: AdmissionEstimate = {
      promptTokens,
      completionTokens: outputTokenCap(chat) + predictionTokens * chat.n,
    };
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    // From here on a hang-up (or the deadline) frees the slot, the queue place and the upstream call at once.
    const lifetime = new RequestLifetime(reply.raw, this.config.relay.maxRequestMs);
    const admitted = await this.admit(request, reply, chat, principal, held).catch((error: unknown) => {
      lifetime.end();
      throw error;
    });
    const { tokens, meter } = admitted;
    const giveBack = async () => {
      if (await meter.release()) {
        tokens.settle(0);
      }
    };
    // After admission, so a request over its limits is refused at once instead of queueing for a slot.
    const releaseSlot = await this.concurrency
      .acquire(principal.accountId, lifetime.signal)
      .catch(async (error: unknown) => {
        lifetime.end();
        await giveBack();
        throw error;
      });
    void reply.headers(tokens.headers);
    request.completion = { chat, meter, signal: lifetime.signal };
    return next.handle().pipe(
      catchError((error: unknown) => from(giveBack()).pipe(mergeMap(() => throwError(() => error)))),
      finalize(() => {
        lifetime.end();
        releaseSlot();
      }),
    );
  }

  /**
   * Requests per minute, tokens per minute and the balance hold are independent, so the three Redis
   * calls leave in one write and are in flight at once. When one refuses, the tokens and the hold
   * are given back (a request that reached admission stays counted); the first refusal in that
   * order is the answer.
   */
  private async admit(
    request: CompletionRequest,
    reply: FastifyReply,
    chat: ChatRequest,
    principal: ApiKeyPrincipal,
    held: AdmissionEstimate,
  ): Promise<{ tokens: TokenAdmission; meter: CompletionMeter }> {
    // Usage is recorded long after admission; by then the token admission is known.
    const admitted: { tokens?: TokenAdmission } = {};
    const onRecorded = (usage: TokenUsage) => admitted.tokens?.settle(usage.promptTokens + usage.completionTokens);
    const windows = (request as LimitedRequest).requestWindows;
    const [requests, tokens, meter] = await inOneWrite(this.redis, () =>
      Promise.allSettled([
        windows ? this.requestLimiter.admit(windows, (headers) => void reply.headers(headers)) : undefined,
        this.admitTokens(request, chat, held.promptTokens + held.completionTokens),
        this.metering.admit(principal, request.id, chat, held, onRecorded),
      ]),
    );
    if (requests.status === 'rejected' || tokens.status === 'rejected' || meter.status === 'rejected') {
      if (tokens.status === 'fulfilled') {
        tokens.value.settle(0);
      }
      if (meter.status === 'fulfilled') {
        await meter.value.release();
      }
      const refusal = [requests, tokens, meter].find((outcome) => outcome.status === 'rejected');
      throw (refusal as PromiseRejectedResult).reason;
    }
    admitted.tokens = tokens.value;
    return { tokens: tokens.value, meter: meter.value };
  }

  private admitTokens(request: CompletionRequest, chat: ChatRequest, estimate: number): Promise<TokenAdmission> {
    const { accountId, user } = requestKeys(request);
    // The throttler guard's resolver already computed them for this request.
    const limits = (request as LimitedRequest).limits ?? this.policy.limitsFor(accountId, chat.model);
    const endUser = user && limits.endUserTpm ? { id: user, tpm: limits.endUserTpm } : undefined;
    return this.tokenLimiter.admit({ accountId, modelId: chat.model.id, tpm: limits.tpm, endUser }, estimate);
  }
}
