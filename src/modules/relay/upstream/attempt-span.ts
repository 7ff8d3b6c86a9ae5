import { RequestTrace } from 'src/common/http/request-trace';
import { failureOf, TraceSpan } from 'src/common/telemetry/tracing';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { UpstreamResult, UpstreamTrace } from 'src/modules/relay/upstream/upstream-client';

/**
 * One upstream attempt's span, inside the request's (null when tracing is off): the channel and its
 * provider, the answer's status, `first_byte` when the answer's head arrives, and why the route
 * failed. It is sent upstream as the `traceparent` of the attempt's request.
 */
export class AttemptSpan {
  private constructor(private readonly span: TraceSpan) {}

  static start(trace: RequestTrace, route: CatalogRoute): AttemptSpan | null {
    if (trace.span === null) {
      return null;
    }
    const { id, type } = route.channel;
    const span = trace.span.child(
      `upstream ${type}`,
      { 'gateway.channel_id': id, 'gateway.provider': type, 'gen_ai.request.model': route.upstreamModel },
      'client',
    );
    return new AttemptSpan(span);
  }

  /**
   * Runs one attempt inside its span (none when tracing is off): the span ends with the attempt's
   * outcome, or failed when it throws, and the outcome or the error goes on to the caller.
   */
  static async around<T extends string | { kind: string }>(
    trace: RequestTrace,
    route: CatalogRoute,
    attempt: (span: AttemptSpan | null) => Promise<T>,
  ): Promise<T> {
    const span = AttemptSpan.start(trace, route);
    try {
      const outcome = await attempt(span);
      span?.ended(outcome);
      return outcome;
    } catch (error) {
      span?.threw(error);
      throw error;
    }
  }

  /** What the upstream request carries: our request id, and this span as its parent. */
  static upstreamTrace(trace: RequestTrace, span: AttemptSpan | null): UpstreamTrace {
    return span === null ? { requestId: trace.id } : { requestId: trace.id, traceparent: span.span.traceparent };
  }

  /** The upstream answered (its head arrived) or could not be reached. */
  answered(result: UpstreamResult): void {
    if (result.kind === 'unreachable') {
      this.span.fail(result.timedOut ? 'timeout' : 'unreachable');
      return;
    }
    this.span.event('first_byte');
    this.span.set({ 'http.response.status_code': result.statusCode });
    if (result.providerRequestId !== null) {
      this.span.set({ 'gateway.provider_request_id': result.providerRequestId });
    }
  }

  /** How the attempt ended: the answer's outcome (`completed`, `client_aborted`, …) or the route's failure. */
  ended(outcome: string | { kind: string }): void {
    if (typeof outcome === 'string') {
      this.span.set({ 'gateway.outcome': outcome });
      if (outcome !== 'completed') {
        this.span.fail(outcome);
      }
    } else {
      this.span.fail(outcome.kind);
    }
    this.span.end();
  }

  /** The attempt threw (the client left, the deadline passed, the upstream refused the client's request). */
  threw(error: unknown): void {
    this.span.fail(failureOf(error));
    this.span.end();
  }
}
