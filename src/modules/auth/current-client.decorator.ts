import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { SessionClient } from 'src/modules/auth/console-sessions.service';

/**
 * Who is logging in: the client address as Fastify resolved it (like `@Ip()`: behind TRUST_PROXY's
 * proxies only) and the user agent, for the session list. Not a documented header parameter: no
 * client has to send one.
 */
export const CurrentClient = createParamDecorator((_data: unknown, context: ExecutionContext): SessionClient => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return { ip: request.ip, userAgent: request.headers['user-agent'] };
});
