import { anthropicError } from 'src/common/errors/anthropic-error';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';

describe('anthropicError', () => {
  it.each([
    [ErrorKind.InvalidRequest, 400, 'invalid_request_error'],
    [ErrorKind.InvalidApiKey, 401, 'authentication_error'],
    [ErrorKind.InsufficientBalance, 403, 'permission_error'],
    [ErrorKind.ApiKeyDisabled, 403, 'permission_error'],
    [ErrorKind.NotFound, 404, 'not_found_error'],
    [ErrorKind.PayloadTooLarge, 413, 'request_too_large'],
    [ErrorKind.RateLimited, 429, 'rate_limit_error'],
    [ErrorKind.UpstreamError, 500, 'api_error'],
    [ErrorKind.UpstreamUnreachable, 502, 'api_error'],
    [ErrorKind.Overloaded, 529, 'overloaded_error'],
  ])('should answer %s with %d %s, keeping the message', (kind, status, type) => {
    expect(anthropicError(new ApiError(kind, 'why'))).toEqual({
      status,
      body: { type: 'error', error: { type, message: 'why' } },
    });
  });
});
