import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'pino';
import { AuthenticatedRequest } from 'src/common/decorators/auth.decorators';
import { isDatabaseUnavailable } from 'src/common/database/database-errors';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { errorAnswer } from 'src/common/http/wire-format';
import { errorLogFields } from 'src/common/filters/error-log-fields';
import { LOGGER } from 'src/common/logging/logger';

/**
 * The one place errors become HTTP answers: the error object (docs/errors.md), or Anthropic's on a route
 * marked for it (wire-format.ts).
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): Promise<void> {
    const http = host.switchToHttp();
    return answerError(
      exception,
      http.getRequest<AuthenticatedRequest>(),
      http.getResponse<FastifyReply>(),
      this.logger,
    );
  }
}

/**
 * Answers `exception` as the error object (or Anthropic's, wire-format.ts), logging only what an
 * internal error was: the filter's work, shared with the routes Nest's router does not run (direct-routes.ts).
 */
export async function answerError(
  exception: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  logger: Logger,
): Promise<void> {
  const error = toApiError(exception);
  const path = request.url.split('?')[0];
  if (error.kind === ErrorKind.Internal) {
    logger.error(
      { reqId: request.id, method: request.method, path, error: errorLogFields(exception) },
      'unhandled error',
    );
  } else if (isDatabaseUnavailable(exception)) {
    // The code only: the outage itself shows in gateway_dependency_up and GET /admin/health.
    const code = (exception as { code?: unknown }).code;
    logger.warn({ reqId: request.id, method: request.method, path, code }, 'dependency unavailable');
  }
  // A stream that already started cannot change its status; relayStream ends it with an error event.
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.end();
    return;
  }
  // No key check here: on /v1 the key was checked before the body was read (edge-hooks.ts), so a
  // bad key was answered 401 before any parsing error could arise.
  const { status, body } = errorAnswer(request, error);
  await reply.code(status).headers(error.headers).send(body);
}

/**
 * Postgres (or Redis) cannot be reached: a 503 the client may retry, as SPEC 2.4 has it for maintenance,
 * not a 500. /v1 admission does not need Postgres; the console and admin reads and writes do.
 */
const dependencyUnavailable = () =>
  new ApiError(ErrorKind.Overloaded, 'The service is temporarily unavailable. Retry shortly.', null, undefined, {
    'retry-after': '10',
  });

export function toApiError(exception: unknown): ApiError {
  if (exception instanceof ApiError) {
    return exception;
  }
  if (isDatabaseUnavailable(exception)) {
    return dependencyUnavailable();
  }
  if (exception instanceof HttpException) {
    // Our own code throws ApiError only; HttpExceptions come from Nest and Fastify before the handler runs.
    const status = exception.getStatus();
    switch (status) {
      case 400:
        return ApiError.invalid(`The request body could not be parsed: ${exception.message}`);
      case 404:
        return new ApiError(ErrorKind.NotFound, 'Unknown path. See /docs for the API.');
      case 413:
        return new ApiError(ErrorKind.PayloadTooLarge, 'The request body is too large.');
      case 415:
        return ApiError.invalid('Content-Type must be application/json.');
    }
    if (status < 500) {
      return ApiError.invalid(exception.message);
    }
  }
  return new ApiError(ErrorKind.Internal, 'The server had an error while processing your request. Retry shortly.');
}
