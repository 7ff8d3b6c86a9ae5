import { EnvDto } from 'src/config/env.dto';

/** Where this process sends its spans; null: tracing is off (the default) and no OpenTelemetry code is loaded. */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL the spans are POSTed to, as JSON. */
  tracesUrl: string;
  /** OTEL_SERVICE_NAME; null: `llm-gateway-api` or `llm-gateway-worker`. */
  serviceName: string | null;
}

/**
 * OpenTelemetry's own variables, with their standard meaning: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
 * the traces URL as it is; OTEL_EXPORTER_OTLP_ENDPOINT is a base, `/v1/traces` appended; neither set,
 * or OTEL_SDK_DISABLED=true, and tracing is off.
 */
export function tracingConfigOf(dto: EnvDto): TracingConfig | null {
  if (dto.OTEL_SDK_DISABLED?.toLowerCase() === 'true') {
    return null;
  }
  const base = dto.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = dto.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : null);
  if (tracesUrl === null) {
    return null;
  }
  return { tracesUrl, serviceName: dto.OTEL_SERVICE_NAME ?? null };
}
