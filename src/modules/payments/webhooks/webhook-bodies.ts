import { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import { Readable } from 'node:stream';
import { SMALL_BODY_LIMIT_BYTES } from 'src/common/http/body-limits';

const WEBHOOKS = '/webhooks/';
const RAW_BODY = Symbol('webhookRawBody');

type WithRawBody = FastifyRequest & { [RAW_BODY]?: Buffer };

/**
 * An error as Fastify raises it while reading a body. Nest turns only errors named FastifyError into an
 * HTTP error of their status; any other reaches the exception filter as an unexpected 500.
 */
abstract class BodyError extends Error {
  override readonly name = 'FastifyError';
  abstract readonly statusCode: number;
  abstract readonly code: string;
}

/** A body over the limit: 413, like Fastify's own. */
class BodyTooLarge extends BodyError {
  readonly statusCode = 413;
  readonly code = 'FST_ERR_CTP_BODY_TOO_LARGE';
}

/** What every route but /webhooks answers to a form, as it does to any content type it does not take: 400. */
class UnsupportedForm extends BodyError {
  readonly statusCode = 415;
  readonly code = 'FST_ERR_CTP_INVALID_MEDIA_TYPE';
}

/**
 * Whether a request is for a webhook: by the route it was matched to (the URL as sent may be
 * percent-encoded), or by the URL as sent (a form posted to an unknown webhook path is a 404, not a 400).
 */
const isWebhook = (request: FastifyRequest) =>
  (request.routeOptions.url ?? '').startsWith(WEBHOOKS) || request.url.startsWith(WEBHOOKS);

/**
 * Wallets sign the exact bytes they send, so /webhooks keeps them: Alipay posts a form, which no other
 * route takes, and WeChat Pay posts JSON, whose parsed form cannot be signed over again. Bounded like
 * any body outside /v1. The hook that keeps them is added to the webhook routes alone: as a global hook
 * it was one more promise on every request, completions included.
 */
export function keepWebhookBodies(fastify: FastifyInstance): void {
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) =>
    isWebhook(request) ? done(null, body) : done(new UnsupportedForm('Unsupported Media Type'), undefined),
  );
  fastify.addHook('onRoute', (route) => {
    if (route.url.startsWith(WEBHOOKS)) {
      route.preParsing = [...[route.preParsing ?? []].flat(), keepRawBody];
    }
  });
}

async function keepRawBody(request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload): Promise<Readable> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of payload as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > SMALL_BODY_LIMIT_BYTES) {
      throw new BodyTooLarge('The request body is too large.');
    }
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks, size);
  (request as WithRawBody)[RAW_BODY] = body;
  const copy = Readable.from([body]) as Readable & { receivedEncodedLength?: number };
  copy.receivedEncodedLength = body.length;
  return copy;
}

/** The exact bytes of a webhook's body (empty when it had none). */
export function rawBodyOf(request: FastifyRequest): Buffer {
  return (request as WithRawBody)[RAW_BODY] ?? Buffer.alloc(0);
}
