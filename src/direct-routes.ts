import { INestApplicationContext } from '@nestjs/common';
import { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { Logger } from 'pino';
import { answerError } from 'src/common/filters/all-exceptions.filter';
import { ChatCompletionsController } from 'src/modules/chat-completions/chat-completions.controller';

type DirectHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

// The handler has answered through `reply` itself: resolving to anything but undefined would make
// Fastify send that too, and build (with its stack trace) an already-sent error it never shows.
const answered = (): undefined => undefined;

/**
 * Routes whose controller method Fastify calls itself instead of through Nest's router (its execution
 * context, the global guard, the pipes on each parameter and the exception zone), which cost more CPU
 * per request than anything else between the socket and the admission. The controller stays the
 * route's declaration (OpenAPI, the guard's metadata), and what Nest would have done still happens:
 * the API key was checked before the body was read (edge-hooks.ts) and the handler refuses a request
 * without its principal, as the guard would; an error is answered by the exception filter's own code.
 * Only for hot routes whose handler takes the raw request and reply (no pipes, interceptors or
 * returned bodies to serialise).
 */
const DIRECT_ROUTES: Record<string, (app: INestApplicationContext) => DirectHandler> = {
  'POST /v1/chat/completions': (app) => {
    const controller = app.get(ChatCompletionsController);
    return (request, reply) => controller.createChatCompletion(request, reply);
  },
};

/**
 * The handler Fastify should run for a route Nest registered: its direct one, built on the first request
 * (the application is complete by then), or Nest's own.
 */
export function directHandler(
  method: string | string[],
  url: string,
  nestHandler: RouteHandlerMethod,
  context: () => { app: INestApplicationContext; logger: Logger },
): RouteHandlerMethod {
  const build = typeof method === 'string' ? DIRECT_ROUTES[`${method} ${url}`] : undefined;
  if (!build) {
    return nestHandler;
  }
  let handler: DirectHandler | undefined;
  return function direct(request, reply) {
    const { app, logger } = context();
    handler ??= build(app);
    return handler(request, reply).then(answered, (error: unknown) => answerError(error, request, reply, logger));
  };
}
