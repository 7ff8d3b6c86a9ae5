import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { ANTHROPIC_WIRE, errorAnswer, presentedAuthorization } from 'src/common/http/wire-format';

const anthropicRoute = (headers: Record<string, string>) => ({ headers, routeOptions: { config: ANTHROPIC_WIRE } });
const otherRoute = (headers: Record<string, string>) => ({ headers, routeOptions: { config: {} } });

describe('presentedAuthorization', () => {
  it('should take x-api-key as a Bearer key on an Anthropic route only', () => {
    expect(presentedAuthorization(anthropicRoute({ 'x-api-key': 'sk-a' }))).toBe('Bearer sk-a');
    expect(presentedAuthorization(otherRoute({ 'x-api-key': 'sk-a' }))).toBeUndefined();
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
  });
});
