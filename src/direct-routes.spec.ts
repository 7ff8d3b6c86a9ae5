import { INestApplicationContext } from '@nestjs/common';
import fastify, { FastifyReply, RouteHandlerMethod } from 'fastify';
import pino from 'pino';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { directHandler } from 'src/direct-routes';

/** An application whose chat-completion controller runs `handle`. */
function appWith(handle: (reply: FastifyReply) => Promise<unknown>): INestApplicationContext {
  const controller = { createChatCompletion: (_request: unknown, reply: FastifyReply) => handle(reply) };
  return { get: () => controller } as unknown as INestApplicationContext;
}

async function serve(method: string, url: string, nestHandler: RouteHandlerMethod, app: INestApplicationContext) {
  const server = fastify();
  const logger = pino({ level: 'silent' });
  server.route({ method, url, handler: directHandler(method, url, nestHandler, () => ({ app, logger })) });
  await server.ready();
  return server;
}

describe('directHandler', () => {
  const nest: RouteHandlerMethod = () => Promise.resolve({ from: 'nest' });

  it('leaves every other route to Nest', async () => {
    const server = await serve(
      'POST',
      '/v1/embeddings',
      nest,
      appWith(() => Promise.reject(new Error('not here'))),
    );
    const answer = await server.inject({ method: 'POST', url: '/v1/embeddings', payload: {} });
    expect(answer.json()).toEqual({ from: 'nest' });
  });

  it('runs the chat-completion controller itself, and sends nothing more once it answered', async () => {
    const server = await serve(
      'POST',
      '/v1/chat/completions',
      nest,
      appWith(async (reply) => {
        await reply.code(200).send({ id: 'chatcmpl-1' });
        // What the real handler resolves to (the metered status): not a body to send.
        return 'charged';
      }),
    );
    const answer = await server.inject({ method: 'POST', url: '/v1/chat/completions', payload: {} });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ id: 'chatcmpl-1' });
  });

  it("answers the controller's errors in SPEC's shape, as Nest's exception filter does", async () => {
    const refusal = new ApiError(ErrorKind.InsufficientBalance, 'Top up to continue.');
    const server = await serve(
      'POST',
      '/v1/chat/completions',
      nest,
      appWith(() => Promise.reject(refusal)),
    );
    const answer = await server.inject({ method: 'POST', url: '/v1/chat/completions', payload: {} });
    expect(answer.statusCode).toBe(refusal.status);
    expect(answer.json()).toEqual({ error: expect.objectContaining({ message: 'Top up to continue.' }) });
  });

  it('answers an unexpected error as a 500 without its message', async () => {
    const server = await serve(
      'POST',
      '/v1/chat/completions',
      nest,
      appWith(() => Promise.reject(new Error('db password is hunter2'))),
    );
    const answer = await server.inject({ method: 'POST', url: '/v1/chat/completions', payload: {} });
    expect(answer.statusCode).toBe(500);
    expect(answer.body).not.toContain('hunter2');
  });
});
