import { CallHandler, createParamDecorator, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { catchError, finalize, from, mergeMap, Observable, throwError } from 'rxjs';
import { AuthenticatedRequest, AuthKind } from 'src/common/decorators/auth.decorators';
import { AdmittedCompletion, CompletionAdmission } from 'src/modules/chat-completions/completion-admission.service';

/** Each request's admission, for the handler (`@Admitted()`); gone with the request. */
const admissions = new WeakMap<FastifyRequest, AdmittedCompletion>();

/**
 * Meters the completion route: the admission service decides whether the request runs (and holds
 * its cost); the handler gets the admission; a failed relay gives the hold back; the slot is freed
 * whatever the outcome. Usage itself is recorded by the relay, through the admission's meter.
 */
@Injectable()
export class MeteringInterceptor implements NestInterceptor {
  constructor(private readonly admission: CompletionAdmission) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    const principal = request.principal;
    if (principal?.kind !== AuthKind.ApiKey) {
      throw new Error('MeteringInterceptor used on a route without API-key authentication');
    }
    const admitted = await this.admission.admit(principal, request.body, request.id, http.getResponse<FastifyReply>());
    admissions.set(request, admitted);
    return next.handle().pipe(
      catchError((error: unknown) => from(admitted.giveBack()).pipe(mergeMap(() => throwError(() => error)))),
      finalize(() => admitted.release()),
    );
  }
}

/** The admission MeteringInterceptor made for this request. */
export const Admitted = createParamDecorator((_data: unknown, context: ExecutionContext): AdmittedCompletion => {
  const admitted = admissions.get(context.switchToHttp().getRequest<FastifyRequest>());
  if (!admitted) {
    throw new Error('@Admitted() used on a route without MeteringInterceptor');
  }
  return admitted;
});
