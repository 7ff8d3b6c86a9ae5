/** A W3C trace context parent (https://www.w3.org/TR/trace-context/#traceparent-header), as read from a header. */
export interface TraceParent {
  traceId: string;
  /** The caller's span: the parent of ours. */
  spanId: string;
  /** The trace flags byte (bit 0: sampled). */
  flags: number;
}

// version "-" trace-id "-" parent-id "-" trace-flags, lowercase hex only; a later version may append "-" fields.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * The parent a `traceparent` header names, or null when it is absent or malformed (then a new trace
 * starts: a bad header is ignored, never refused). Version ff is invalid; version 00 has exactly four
 * fields; an all-zero trace or parent id is invalid.
 */
export function parseTraceparent(header: string | string[] | undefined): TraceParent | null {
  if (typeof header !== 'string' || header.length > 512) {
    return null;
  }
  const match = TRACEPARENT.exec(header.trim());
  if (!match) {
    return null;
  }
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) {
    return null;
  }
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) {
    return null;
  }
  return { traceId, spanId, flags: parseInt(flags, 16) };
}

/** The version-00 `traceparent` naming a span, for the next hop. */
export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}
