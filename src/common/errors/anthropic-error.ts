import { ApiError, ErrorKind } from 'src/common/errors/api-error';

/** Anthropic's error body: what its SDKs and Claude-native tools parse. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/**
 * The error kinds (docs/errors.md) in Anthropic's terms: its `error.type` and HTTP status. The statuses stay ours,
 * except overload, which Anthropic signals as 529 `overloaded_error` (its clients back off on it).
 */
const ANTHROPIC_ERRORS: Record<ErrorKind, { type: string; status?: number }> = {
  [ErrorKind.InvalidRequest]: { type: 'invalid_request_error' },
  [ErrorKind.NotFound]: { type: 'not_found_error' },
  [ErrorKind.PayloadTooLarge]: { type: 'request_too_large' },
  [ErrorKind.Conflict]: { type: 'invalid_request_error' },
  [ErrorKind.InvalidApiKey]: { type: 'authentication_error' },
  [ErrorKind.ApiKeyDisabled]: { type: 'permission_error' },
  [ErrorKind.ApiKeyExpired]: { type: 'permission_error' },
  [ErrorKind.AccountSuspended]: { type: 'permission_error' },
  [ErrorKind.ModelNotPermitted]: { type: 'permission_error' },
  [ErrorKind.KeySpendLimitReached]: { type: 'permission_error' },
  [ErrorKind.EmailNotVerified]: { type: 'permission_error' },
  [ErrorKind.InvalidSession]: { type: 'authentication_error' },
  [ErrorKind.InvalidCredentials]: { type: 'authentication_error' },
  [ErrorKind.InvalidAdminToken]: { type: 'authentication_error' },
  [ErrorKind.AdminPermissionRequired]: { type: 'permission_error' },
  [ErrorKind.InvalidMetricsToken]: { type: 'authentication_error' },
  [ErrorKind.InsufficientBalance]: { type: 'permission_error' },
  [ErrorKind.RateLimited]: { type: 'rate_limit_error' },
  [ErrorKind.UpstreamError]: { type: 'api_error' },
  [ErrorKind.UpstreamUnreachable]: { type: 'api_error' },
  [ErrorKind.Overloaded]: { type: 'overloaded_error', status: 529 },
  [ErrorKind.Internal]: { type: 'api_error' },
  [ErrorKind.ClientClosedRequest]: { type: 'invalid_request_error' },
};

export function anthropicError(error: ApiError): { status: number; body: AnthropicErrorBody } {
  const { type, status } = ANTHROPIC_ERRORS[error.kind];
  return { status: status ?? error.status, body: { type: 'error', error: { type, message: error.message } } };
}

/** An error in a stream's own shape (`error.type` server_error…) as Anthropic's body; the message is kept. */
export function anthropicStreamError(message: string, code: string | null): AnthropicErrorBody {
  const type = code === 'server_overloaded' ? 'overloaded_error' : 'api_error';
  return { type: 'error', error: { type, message } };
}
