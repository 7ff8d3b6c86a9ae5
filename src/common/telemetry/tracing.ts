import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { Logger } from 'pino';
import { ApiError } from 'src/common/errors/api-error';
import { formatTraceparent, parseTraceparent } from 'src/common/telemetry/traceparent';
import { TracingConfig } from 'src/config/tracing-config';

/**
 * OpenTelemetry tracing, off unless an OTLP endpoint is configured. Off, nothing of the SDK is ever
 * loaded (only `import type` above; the packages are imported in startTracing) and each place that
 * would trace pays one null check. The spans are made by hand where a request's or a job's work is
 * (the /v1 request, the admission, each upstream attempt, a settlement batch, a payment confirmation)
 * and passed along explicitly, never through an async context: the SDK's auto-instrumentation of
 * http, undici, pg and ioredis wraps every call of the hot path (and its context manager binds an
 * AsyncLocalStorage per request, several percent on Node 20: job-context.ts), to trace what the
 * gateway's own metrics already time.
 */

export type SpanAttributes = Record<string, string | number | boolean>;

/** What the gateway does with a span: a narrow view of OpenTelemetry's, so nothing else imports the SDK. */
export interface TraceSpan {
  /** The W3C `traceparent` naming this span, for the next hop to take as its parent. */
  readonly traceparent: string;
  set(attributes: SpanAttributes): void;
  event(name: string): void;
  /** Marks the span failed, with a short reason of ours (a kind or code, never text a client sent). */
  fail(reason: string): void;
  /** A span inside this one; `client` for a call to another service. */
  child(name: string, attributes?: SpanAttributes, kind?: SpanRole): TraceSpan;
  end(): void;
}

export type SpanRole = 'server' | 'client' | 'internal';

type OtelApi = typeof import('@opentelemetry/api');

class OtelSpan implements TraceSpan {
  constructor(
    private readonly tracing: OtelTracing,
    private readonly span: Span,
  ) {}

  get traceparent(): string {
    const { traceId, spanId, traceFlags } = this.span.spanContext();
    return formatTraceparent(traceId, spanId, traceFlags);
  }

  set(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes);
  }

  event(name: string): void {
    this.span.addEvent(name);
  }

  fail(reason: string): void {
    this.span.setStatus({ code: this.tracing.api.SpanStatusCode.ERROR, message: reason });
  }

  child(name: string, attributes: SpanAttributes = {}, kind: SpanRole = 'internal'): TraceSpan {
    return this.tracing.start(
      name,
      attributes,
      kind,
      this.tracing.api.trace.setSpan(this.tracing.api.ROOT_CONTEXT, this.span),
    );
  }

  end(): void {
    this.span.end();
  }
}

class OtelTracing {
  constructor(
    readonly api: OtelApi,
    private readonly tracer: Tracer,
    private readonly provider: BasicTracerProvider,
  ) {}

  start(name: string, attributes: SpanAttributes, kind: SpanRole, parent: Context): TraceSpan {
    const { SpanKind } = this.api;
    const spanKind = kind === 'server' ? SpanKind.SERVER : kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL;
    return new OtelSpan(this, this.tracer.startSpan(name, { kind: spanKind, attributes }, parent));
  }

  /** A remote parent from a `traceparent` header; the root context when there is none or it is malformed. */
  contextOf(traceparent: string | string[] | undefined): Context {
    const parent = parseTraceparent(traceparent);
    const { trace, ROOT_CONTEXT } = this.api;
    if (parent === null) {
      return ROOT_CONTEXT;
    }
    return trace.setSpanContext(ROOT_CONTEXT, {
      traceId: parent.traceId,
      spanId: parent.spanId,
      traceFlags: parent.flags,
      isRemote: true,
    });
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}

let active: OtelTracing | null = null;

/**
 * Loads the SDK and starts exporting spans, when `settings` says where to; without, does nothing and
 * loads nothing. The SDK's own OTEL_* variables still apply (OTEL_BSP_SCHEDULE_DELAY,
 * OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS, …). Export failures are logged as warnings.
 */
export async function startTracing(
  settings: TracingConfig | null,
  defaultServiceName: string,
  logger: Logger,
): Promise<void> {
  if (settings === null || active !== null) {
    return;
  }
  const [api, sdk, otlp, resources, conventions] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const log = logger.child({ component: 'tracing' });
  api.diag.setLogger(
    {
      error: (message) => log.warn(message),
      warn: (message) => log.warn(message),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    api.DiagLogLevel.WARN,
  );
  const serviceName = settings.serviceName ?? defaultServiceName;
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ [conventions.ATTR_SERVICE_NAME]: serviceName }),
    spanProcessors: [new sdk.BatchSpanProcessor(new otlp.OTLPTraceExporter({ url: settings.tracesUrl }))],
  });
  // The tracer is ours alone, not registered as the global one: no library of the process picks it up.
  active = new OtelTracing(api, provider.getTracer('llm-gateway'), provider);
  log.info({ tracesUrl: settings.tracesUrl, serviceName }, 'tracing on');
}

/** Sends the spans still buffered and stops tracing; for the entrypoints' shutdown. */
export async function stopTracing(): Promise<void> {
  const stopping = active;
  active = null;
  await stopping?.shutdown();
}

export function tracingOn(): boolean {
  return active !== null;
}

/**
 * A new span, or null when tracing is off. `traceparent`: an incoming W3C header; when valid, the
 * span continues the caller's trace, otherwise it starts a new one.
 */
export function startSpan(
  name: string,
  attributes: SpanAttributes,
  kind: SpanRole = 'internal',
  traceparent?: string | string[],
): TraceSpan | null {
  return active === null ? null : active.start(name, attributes, kind, active.contextOf(traceparent));
}

/** Runs `work` in a span of its own (a worker's job), failed when it throws and ended whatever happens. */
export async function traced<T>(
  name: string,
  attributes: SpanAttributes,
  work: (span: TraceSpan | null) => Promise<T>,
): Promise<T> {
  const span = startSpan(name, attributes);
  if (span === null) {
    return work(null);
  }
  try {
    return await work(span);
  } catch (error) {
    span.fail(failureOf(error));
    throw error;
  } finally {
    span.end();
  }
}

/** A failure's short name for a span: the error kind, or the error's class; never its message (it may quote a client). */
export function failureOf(error: unknown): string {
  if (error instanceof ApiError) {
    return error.kind;
  }
  return error instanceof Error ? error.name : 'error';
}
