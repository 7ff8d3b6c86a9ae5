import { ServerResponse } from 'node:http';
import { CancelSignal, RequestSignal } from 'src/common/http/cancel-signal';
import { ApiError, clientClosed, ErrorKind } from 'src/common/errors/api-error';

/** The answer for a completion cut at MAX_REQUEST_MS before anything reached the client (500, docs/errors.md). */
export class DeadlineExceeded extends ApiError {
  constructor() {
    super(ErrorKind.UpstreamError, 'The completion did not finish within the time limit. Retry in a few seconds.');
  }
}

/**
 * One completion's life from admission on: its signal aborts the moment the client hangs up (with
 * clientClosed as the reason) or the overall deadline passes (DeadlineExceeded), whichever comes
 * first, so the slot wait, the upstream call and the relay all stop at once. Registered before the
 * slot wait, because a client that leaves while queued must free its place too.
 */
export class RequestLifetime {
  private readonly cut = new RequestSignal();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly raw: ServerResponse,
    maxRequestMs: number,
  ) {
    // `on`, removed by end(): a response closes once, and `once`'s wrapper cost each request a
    // promotion to the old generation (edge-hooks.ts).
    raw.on('close', this.onClose);
    if (raw.destroyed) {
      // It hung up during admission, before anyone listened.
      this.cut.abort(clientClosed());
    }
    this.timer = setTimeout(() => this.cut.abort(new DeadlineExceeded()), maxRequestMs);
  }

  get signal(): CancelSignal {
    return this.cut;
  }

  /** The request is over: no deadline any more, and a later close is just the connection ending. */
  end(): void {
    clearTimeout(this.timer);
    this.raw.off('close', this.onClose);
  }

  private readonly onClose = () => {
    if (!this.raw.writableFinished) {
      this.cut.abort(clientClosed());
    }
  };
}
