import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { ANTHROPIC_WIRE, errorAnswer, presentedAuthorization } from 'src/common/http/wire-format';

const anthropicRoute = (headers: Record<string, string>) => ({ headers, routeOptions: { config: ANTHROPIC_WIRE } });
const otherRoute = (headers: Record<string, string>) => ({ headers, routeOptions: { config: {} } });
/** A request no route matched: Fastify gives it no route url. */
const unmatched = (url: string, headers: Record<string, string>) => ({ headers, url, routeOptions: { config: {} } });

describe('presentedAuthorization', () => {
  it('should take x-api-key as a Bearer key on an Anthropic route only', () => {
    expect(presentedAuthorization(anthropicRoute({ 'x-api-key': 'sk-a' }))).toBe('Bearer sk-a');
    expect(presentedAuthorization(otherRoute({ 'x-api-key': 'sk-a' }))).toBeUndefined();
  });

  it('should take x-api-key on an unknown path under /v1/messages, and on no other unknown path', () => {
    for (const url of ['/v1/messages/batches', '/v1/messages', '/v1/messages?beta=true', '/v1/messages/x/y']) {
      expect(presentedAuthorization(unmatched(url, { 'x-api-key': 'sk-a' }))).toBe('Bearer sk-a');
    }
    for (const url of ['/v1/messagesx', '/v1/chat/completions', '/v2/messages']) {
      expect(presentedAuthorization(unmatched(url, { 'x-api-key': 'sk-a' }))).toBeUndefined();
    }
  });

  it('should prefer Authorization when both are sent', () => {
    expect(presentedAuthorization(anthropicRoute({ authorization: 'Bearer sk-b', 'x-api-key': 'sk-a' }))).toBe(
      'Bearer sk-b',
    );
  });
});

describe('errorAnswer', () => {
  it("should answer in Anthropic's shape on an Anthropic route and in SPEC's elsewhere", () => {
    const error = new ApiError(ErrorKind.Overloaded, 'busy');

    expect(errorAnswer(anthropicRoute({}), error)).toEqual({
      status: 529,
      body: { type: 'error', error: { type: 'overloaded_error', message: 'busy' } },
    });
    expect(errorAnswer(otherRoute({}), error)).toEqual({ status: 503, body: error.toBody() });
    expect(errorAnswer(unmatched('/v1/messages/batches', {}), error).status).toBe(529);
    expect(errorAnswer(unmatched('/v1/models/x', {}), error).status).toBe(503);
  });
});
