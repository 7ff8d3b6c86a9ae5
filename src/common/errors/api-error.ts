import { withFields } from 'src/common/with-fields';

/**
 * Every error the service answers with, as the error object (docs/errors.md). Each kind fixes the HTTP status, the
 * `type` and the machine `code`; the table below is exhaustive over ErrorKind at compile time.
 */
export enum ErrorKind {
  InvalidRequest = 'InvalidRequest',
  NotFound = 'NotFound',
  PayloadTooLarge = 'PayloadTooLarge',
  Conflict = 'Conflict',
  InvalidApiKey = 'InvalidApiKey',
  ApiKeyDisabled = 'ApiKeyDisabled',
  ApiKeyExpired = 'ApiKeyExpired',
  /** An operator suspended the account: its keys are refused and its console is read-only. */
  AccountSuspended = 'AccountSuspended',
  ModelNotPermitted = 'ModelNotPermitted',
  KeySpendLimitReached = 'KeySpendLimitReached',
  /** A console action that needs the account's e-mail address verified first (REQUIRE_EMAIL_VERIFICATION). */
  EmailNotVerified = 'EmailNotVerified',
  InvalidSession = 'InvalidSession',
  InvalidCredentials = 'InvalidCredentials',
  InvalidAdminToken = 'InvalidAdminToken',
  /** A valid admin token whose role lacks the route's permission (ADMIN_TOKENS' roles). */
  AdminPermissionRequired = 'AdminPermissionRequired',
  InvalidMetricsToken = 'InvalidMetricsToken',
  InsufficientBalance = 'InsufficientBalance',
  RateLimited = 'RateLimited',
  UpstreamError = 'UpstreamError',
  UpstreamUnreachable = 'UpstreamUnreachable',
  Overloaded = 'Overloaded',
  Internal = 'Internal',
  /** The client went away before anything was delivered; nobody sees this answer, logs and billing do. */
  ClientClosedRequest = 'ClientClosedRequest',
}

export interface ErrorShape {
  status: number;
  type: string;
  code: string | null;
}

export const ERROR_SHAPES = {
  [ErrorKind.InvalidRequest]: { status: 400, type: 'invalid_request_error', code: null },
  [ErrorKind.NotFound]: { status: 404, type: 'invalid_request_error', code: 'not_found' },
  [ErrorKind.PayloadTooLarge]: { status: 413, type: 'invalid_request_error', code: 'payload_too_large' },
  [ErrorKind.Conflict]: { status: 409, type: 'invalid_request_error', code: 'conflict' },
  [ErrorKind.InvalidApiKey]: { status: 401, type: 'invalid_request_error', code: 'invalid_api_key' },
  [ErrorKind.ApiKeyDisabled]: { status: 403, type: 'invalid_request_error', code: 'api_key_disabled' },
  [ErrorKind.ApiKeyExpired]: { status: 403, type: 'invalid_request_error', code: 'api_key_expired' },
  [ErrorKind.AccountSuspended]: { status: 403, type: 'invalid_request_error', code: 'account_suspended' },
  [ErrorKind.ModelNotPermitted]: { status: 403, type: 'invalid_request_error', code: 'model_not_permitted' },
  [ErrorKind.KeySpendLimitReached]: { status: 403, type: 'invalid_request_error', code: 'key_spend_limit_reached' },
  [ErrorKind.EmailNotVerified]: { status: 403, type: 'invalid_request_error', code: 'email_not_verified' },
  [ErrorKind.InvalidSession]: { status: 401, type: 'invalid_request_error', code: 'invalid_session' },
  [ErrorKind.InvalidCredentials]: { status: 401, type: 'invalid_request_error', code: 'invalid_credentials' },
  [ErrorKind.InvalidAdminToken]: { status: 401, type: 'invalid_request_error', code: 'invalid_admin_token' },
  [ErrorKind.AdminPermissionRequired]: {
    status: 403,
    type: 'invalid_request_error',
    code: 'admin_permission_required',
  },
  [ErrorKind.InvalidMetricsToken]: { status: 401, type: 'invalid_request_error', code: 'invalid_metrics_token' },
  [ErrorKind.InsufficientBalance]: { status: 403, type: 'invalid_request_error', code: 'insufficient_balance' },
  [ErrorKind.RateLimited]: { status: 429, type: 'requests', code: 'rate_limit_exceeded' },
  [ErrorKind.UpstreamError]: { status: 500, type: 'server_error', code: null },
  [ErrorKind.UpstreamUnreachable]: { status: 502, type: 'server_error', code: 'upstream_unreachable' },
  [ErrorKind.Overloaded]: { status: 503, type: 'server_error', code: 'server_overloaded' },
  [ErrorKind.Internal]: { status: 500, type: 'server_error', code: null },
  [ErrorKind.ClientClosedRequest]: { status: 499, type: 'invalid_request_error', code: 'client_closed_request' },
} as const satisfies Record<ErrorKind, ErrorShape>;

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export class ApiError extends Error {
  readonly shape: ErrorShape;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly param: string | null = null,
    /** Overrides the kind's code, e.g. `email_taken` for a Conflict. */
    code?: string,
    /** Extra response headers, e.g. `retry-after`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    const base = ERROR_SHAPES[kind];
    this.shape = code === undefined ? base : withFields(base, { code });
  }

  get status(): number {
    return this.shape.status;
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.shape.type, param: this.param, code: this.shape.code } };
  }

  static invalid(message: string, param: string | null = null): ApiError {
    return new ApiError(ErrorKind.InvalidRequest, message, param);
  }
}

export const clientClosed = () => new ApiError(ErrorKind.ClientClosedRequest, 'The client closed the request.');
