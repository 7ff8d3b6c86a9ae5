import { CallHandler, ExecutionContext, HttpStatus, Injectable, NestInterceptor } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import { catchError, from, mergeMap, Observable } from 'rxjs';
import { AuthenticatedRequest, AuthKind } from 'src/common/http/principal';
import { ApiError } from 'src/common/errors/api-error';
import { AdminRole } from 'src/config/admin-tokens';

/** What the interceptor knows of an admin change before it runs. */
export interface AdminChange {
  actor: string;
  /** The role of the actor's token: what it was allowed to do when it made the change. */
  actorRole: AdminRole;
  method: string;
  /** The route's pattern, e.g. `/admin/channels/:channelId`. */
  route: string;
  params: Record<string, string>;
}

/**
 * Where admin changes are logged (the audit module provides it). `begin` runs before the change
 * and must succeed, or the change does not run; `finish` completes the entry after it.
 */
export abstract class AdminAuditLog {
  abstract begin(change: AdminChange): Promise<unknown>;
  abstract finish(entry: unknown, outcome: 'applied' | 'failed', status: number): Promise<void>;
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Logs every change made through /admin, whatever controller serves it: `AdminAuth()` puts it on
 * every admin controller, so a new admin route is audited without anyone remembering to.
 */
@Injectable()
export class AdminAuditInterceptor implements NestInterceptor {
  constructor(
    private readonly log: AdminAuditLog,
    private readonly reflector: Reflector,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (READS.has(request.method) || request.principal?.kind !== AuthKind.Admin) {
      return next.handle();
    }
    const entry = await this.log.begin({
      actor: request.principal.name,
      actorRole: request.principal.role,
      method: request.method,
      route: request.routeOptions.url ?? request.url.split('?')[0],
      params: (request.params ?? {}) as Record<string, string>,
    });
    const status =
      this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ??
      (request.method === 'POST' ? HttpStatus.CREATED : HttpStatus.OK);
    return next.handle().pipe(
      mergeMap((value: unknown) => from(this.log.finish(entry, 'applied', status).then(() => value))),
      catchError((error: unknown) =>
        from(
          this.log.finish(entry, 'failed', error instanceof ApiError ? error.status : 500).then(() => {
            throw error;
          }),
        ),
      ),
    );
  }
}
