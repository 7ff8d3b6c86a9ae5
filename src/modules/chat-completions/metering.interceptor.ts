import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { catchError, finalize, from, mergeMap, Observable, throwError } from 'rxjs';
import { ApiKeyPrincipal, AuthenticatedRequest } from 'src/common/decorators/auth.decorators';
import { MeteringService } from 'src/modules/billing/metering.service';
import { estimatePromptTokens } from 'src/modules/billing/token-estimator';
import { ChatCompletionsService } from 'src/modules/chat-completions/chat-completions.service';
import { ChatRequest } from 'src/modules/chat-completions/chat-request.validator';
import { CompletionMeter } from 'src/modules/chat-completions/completion-meter';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter';
import { requestKeys } from 'src/modules/rate-limits/gateway-throttler.guard';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { TokenAdmission, TokenRateLimiter } from 'src/modules/rate-limits/token-rate-limiter';

export type CompletionRequest = AuthenticatedRequest & { completion?: { chat: ChatRequest; meter: CompletionMeter } };

/**
 * Admission and metering around the completion route (requests per minute were checked by the
 * throttler guard before it): validate; take a slot of this process (503 when overloaded); count
 * the estimated tokens per minute (429); hold the worst-case cost (403 insufficient_balance). The
 * relay then records usage through the meter, which also corrects the token count; an error
 * before that gives the hold and the tokens back.
 */
@Injectable()
export class MeteringInterceptor implements NestInterceptor {
  constructor(
    private readonly chats: ChatCompletionsService,
    private readonly metering: MeteringService,
    private readonly concurrency: ConcurrencyLimiter,
    private readonly tokenLimiter: TokenRateLimiter,
    private readonly policy: RateLimitPolicy,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<CompletionRequest>();
    const chat = this.chats.prepare(request.body);
    const principal = request.principal as ApiKeyPrincipal;
    const messages = (request.body as { messages: unknown[] }).messages;
    const promptEstimate = estimatePromptTokens(messages);
    const estimate = promptEstimate + (chat.maxTokens ?? chat.model.maxOutputTokens) * chat.n;
    const releaseSlot = await this.concurrency.acquire();
    let tokens: TokenAdmission | undefined;
    try {
      tokens = await this.admitTokens(request, chat, estimate);
      void context.switchToHttp().getResponse<FastifyReply>().headers(tokens.headers);
      const admitted = tokens;
      const meter = await this.metering.admit(principal, request.id, chat, promptEstimate, (usage) =>
        admitted.settle(usage.promptTokens + usage.completionTokens),
      );
      request.completion = { chat, meter };
      const giveBack = async () => {
        if (await meter.release()) {
          admitted.settle(0);
        }
      };
      return next.handle().pipe(
        catchError((error: unknown) => from(giveBack()).pipe(mergeMap(() => throwError(() => error)))),
        finalize(releaseSlot),
      );
    } catch (error) {
      tokens?.settle(0);
      releaseSlot();
      throw error;
    }
  }

  private admitTokens(request: CompletionRequest, chat: ChatRequest, estimate: number): Promise<TokenAdmission> {
    const { accountId, user } = requestKeys(request);
    const limits = this.policy.limitsFor(accountId, chat.model);
    const endUser = user && limits.endUserTpm ? { id: user, tpm: limits.endUserTpm } : undefined;
    return this.tokenLimiter.admit({ accountId, modelId: chat.model.id, tpm: limits.tpm, endUser }, estimate);
  }
}
