import { IncomingHttpHeaders } from 'node:http';
import { Logger } from 'pino';
import { TraceSpan } from 'src/common/telemetry/tracing';

/**
 * A client's own `X-Request-Id` is kept when it is 1–128 characters of letters, digits and `-_.:+=/@`
 * (UUIDs, ULIDs, base64 and most tracing ids fit); anything else is ignored, never refused. It is the
 * client's label only: the bill's key and the `x-request-id` answered stay ours (`req_…`).
 */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9\-_.:+=/@]{1,128}$/;

/** The client's valid `X-Request-Id`, or null. */
export function clientRequestIdOf(headers: IncomingHttpHeaders): string | null {
  const sent = headers['x-request-id'];
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : null;
}

/**
 * Response headers that provider APIs name their own request id by, in the order they are looked for:
 * OpenAI and most compatible APIs `x-request-id`, Anthropic `request-id`, Azure OpenAI also
 * `apim-request-id`. Gemini's API sends none (its body's `responseId` is not read).
 */
const PROVIDER_REQUEST_ID_HEADERS = ['x-request-id', 'request-id', 'apim-request-id'];
/** Printable ASCII without spaces, bounded: a provider's id is stored on the bill and shown to operators. */
const PROVIDER_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The provider's own id of the request its answer belongs to, when it sent a sane one. */
export function providerRequestIdOf(headers: IncomingHttpHeaders): string | null {
  for (const name of PROVIDER_REQUEST_ID_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && PROVIDER_REQUEST_ID.test(value)) {
      return value;
    }
  }
  return null;
}

/**
 * Who a request is, for everything it writes while it runs: our id (the bill's key, sent upstream as
 * `X-Request-Id`), the client's id, a logger that stamps both on every line, and the request's span
 * when tracing is on. The child logger is made on the first line logged: a request that logs nothing
 * pays for none.
 */
export class RequestTrace {
  private logger: Logger | undefined;

  constructor(
    readonly id: string,
    readonly clientId: string | null,
    private readonly root: Logger,
    /** The /v1 request's span (request-spans.ts); null when tracing is off. */
    readonly span: TraceSpan | null = null,
  ) {}

  get log(): Logger {
    return (this.logger ??= this.root.child(
      this.clientId === null ? { reqId: this.id } : { reqId: this.id, clientReqId: this.clientId },
    ));
  }
}
