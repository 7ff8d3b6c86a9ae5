import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { catchError, from, mergeMap, Observable, throwError } from 'rxjs';
import { ApiKeyPrincipal, AuthenticatedRequest } from 'src/common/decorators/auth.decorators';
import { MeteringService } from 'src/modules/billing/metering.service';
import { ChatCompletionsService } from 'src/modules/chat-completions/chat-completions.service';
import { ChatRequest } from 'src/modules/chat-completions/chat-request.validator';
import { CompletionMeter } from 'src/modules/chat-completions/completion-meter';

export type CompletionRequest = AuthenticatedRequest & { completion?: { chat: ChatRequest; meter: CompletionMeter } };

/**
 * Around the completion route: validate, hold the worst-case cost (403 when the balance cannot
 * cover it), then let the handler relay. The relay records usage through the meter; any error
 * before that gives the hold back.
 */
@Injectable()
export class MeteringInterceptor implements NestInterceptor {
  constructor(
    private readonly chats: ChatCompletionsService,
    private readonly metering: MeteringService,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<CompletionRequest>();
    const chat = this.chats.prepare(request.body);
    const messages = (request.body as { messages: unknown[] }).messages;
    const meter = await this.metering.admit(request.principal as ApiKeyPrincipal, request.id, chat, messages);
    request.completion = { chat, meter };
    return next
      .handle()
      .pipe(catchError((error: unknown) => from(meter.release()).pipe(mergeMap(() => throwError(() => error)))));
  }
}
