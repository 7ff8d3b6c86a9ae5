import { HttpResult } from 'test/support/gateway';

export interface ExpectedError {
  type: string;
  /** A code, null, or an asymmetric matcher. */
  code: unknown;
  /** A parameter name, null, or an asymmetric matcher such as `expect.stringMatching(...)`. */
  param?: unknown;
}

/** The response is `status` with exactly the error object: one key `error` with message, type, param, code. */
export function expectApiError(response: HttpResult, status: number, expected: ExpectedError): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: {
      error: {
        message: expect.any(String),
        type: expected.type,
        code: expected.code,
        param: 'param' in expected ? expected.param : null,
      },
    },
  });
  expect((response.body as { error: { message: string } }).error.message).not.toBe('');
}

/** A 400 (docs/errors.md): `invalid_request_error`, code null, and the offending parameter. */
export function expectInvalidRequest(response: HttpResult, param: unknown = null): void {
  expectApiError(response, 400, { type: 'invalid_request_error', code: null, param });
}

/** A 401 `invalid_api_key`: missing, malformed, unknown or deleted key. */
export function expectInvalidApiKey(response: HttpResult): void {
  expectApiError(response, 401, { type: 'invalid_request_error', code: 'invalid_api_key', param: null });
}

export const userMessage = (content = 'Say hi') => [{ role: 'user', content }];
