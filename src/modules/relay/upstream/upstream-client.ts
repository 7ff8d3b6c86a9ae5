import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { IncomingHttpHeaders } from 'node:http';
import { Dispatcher, Pool } from 'undici';
import { CatalogChannel } from 'src/modules/models/catalog.service';
import { CancelSignal } from 'src/common/http/cancel-signal';
import { RelayedBytes } from 'src/modules/relay/upstream/relayed-body';
import { withFields } from 'src/common/with-fields';
import { providerRequestIdOf } from 'src/common/http/request-trace';

const POOL_CLOSE_WAIT_MS = 1_000;

// undici keeps a request's body until the answer has ended, which for a stream is its whole life.
// From this size on a stream's body is handed to undici as chunks it can take only once: once
// written, the bytes are the socket's, and a long stream holds nothing of them (docs/performance.md,
// "Large bodies stay bytes"). Smaller bodies keep undici's quicker path for one buffer.
const HANDED_ONCE_FROM_BYTES = 16 * 1024;

export type UpstreamBody = Dispatcher.ResponseData['body'];

export interface UpstreamResponse {
  kind: 'response';
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: UpstreamBody;
  /** Milliseconds from sending the request to the answer's head: its first byte, as far as we can see it. */
  firstByteMs: number;
  /** The provider's own id of this request (x-request-id, request-id, …), when it sent a sane one. */
  providerRequestId: string | null;
}

/** Which request of ours an upstream request belongs to: sent along, so both sides' logs can be matched. */
export interface UpstreamTrace {
  /** Our `req_…` id, sent as `X-Request-Id` on every attempt. */
  requestId: string;
  /** A W3C `traceparent` for this attempt, when tracing is on. */
  traceparent?: string;
}

export type UpstreamResult =
  | UpstreamResponse
  /** No response at all: refused, reset, DNS, or no headers in time (`timedOut`). */
  | { kind: 'unreachable'; detail: string; timedOut: boolean };

/** undici's codes for a connect, first-byte (headers) or silence (body) timeout. */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

interface ChannelPool {
  baseUrl: string;
  connectMs: number;
  basePath: string;
  pool: Pool;
}

/** Keep-alive connection pools, one per channel, so hot channels never pay a new TCP/TLS handshake. */
@Injectable()
export class UpstreamClient implements OnModuleDestroy {
  private readonly pools = new Map<string, ChannelPool>();

  async post(
    channel: CatalogChannel,
    path: string,
    headers: Record<string, string>,
    payload: string | RelayedBytes,
    signal: CancelSignal,
    stream: boolean,
    trace: UpstreamTrace,
  ): Promise<UpstreamResult> {
    const { pool, basePath } = this.poolFor(channel);
    const { firstByteMs, streamFirstByteMs, silenceMs } = channel.timeouts;
    const { body, length } = requestBody(payload, stream);
    const sentAt = performance.now();
    try {
      const response = await pool.request({
        method: 'POST',
        path: basePath + path,
        headers: withTrace(headers, trace, length),
        // An Iterable body is documented (undici's docs/api/Dispatcher.md); its type declaration omits it.
        body: body as Dispatcher.DispatchOptions['body'],
        // undici listens with addEventListener and reads `aborted` and `reason`: a CancelSignal will do.
        signal,
        headersTimeout: stream ? streamFirstByteMs : firstByteMs,
        bodyTimeout: silenceMs,
      });
      return {
        kind: 'response',
        statusCode: response.statusCode,
        headers: response.headers,
        body: response.body,
        firstByteMs: Math.round(performance.now() - sentAt),
        providerRequestId: providerRequestIdOf(response.headers),
      };
    } catch (error) {
      if (signal.aborted) {
        // The client hung up or the deadline passed: the reason is the answer.
        throw signal.reason;
      }
      const { code, message } = error as { code?: string; message: string };
      return { kind: 'unreachable', detail: code ?? message, timedOut: code !== undefined && TIMEOUT_CODES.has(code) };
    }
  }

  /**
   * Runs once the HTTP server has drained (main.ts waits for in-flight requests first), so nothing should
   * still use a pool: close them gracefully, and destroy whatever has not finished after a short wait.
   */
  async onModuleDestroy(): Promise<void> {
    const pools = [...this.pools.values()].map(({ pool }) => pool);
    let timer: NodeJS.Timeout | undefined;
    const wait = new Promise<void>((resolve) => (timer = setTimeout(resolve, POOL_CLOSE_WAIT_MS)));
    await Promise.race([Promise.all(pools.map((pool) => pool.close().catch(() => undefined))), wait]);
    clearTimeout(timer);
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }

  private poolFor(channel: CatalogChannel): ChannelPool {
    const existing = this.pools.get(channel.id);
    const { connectMs, firstByteMs, silenceMs } = channel.timeouts;
    if (existing && existing.baseUrl === channel.baseUrl && existing.connectMs === connectMs) {
      return existing;
    }
    // The operator moved the channel or changed its connect timeout: let the old pool finish its requests, then close.
    void existing?.pool.close().catch(() => undefined);
    const url = new URL(channel.baseUrl);
    const created: ChannelPool = {
      baseUrl: channel.baseUrl,
      connectMs,
      basePath: url.pathname.replace(/\/+$/, ''),
      // Each request sets its own first-byte and silence timeouts; these only cover a request that does not.
      pool: new Pool(url.origin, {
        connect: { timeout: connectMs },
        headersTimeout: firstByteMs,
        bodyTimeout: silenceMs,
        keepAliveTimeout: 30_000,
      }),
    };
    this.pools.set(channel.id, created);
    return created;
  }
}

/** The adapter's headers with ours added: the request id, the trace context, and the length of chunks. */
function withTrace(
  headers: Record<string, string>,
  trace: UpstreamTrace,
  length: number | null,
): Record<string, string> {
  const added: Record<string, string> = { 'x-request-id': trace.requestId };
  if (trace.traceparent !== undefined) {
    added.traceparent = trace.traceparent;
  }
  // Chunks are written one by one, and undici needs their length up front to send it.
  if (length !== null) {
    added['content-length'] = String(length);
  }
  return withFields(headers, added);
}

/** What undici is given to send: one string or buffer, or chunks with their length in all. */
interface RequestBody {
  body: string | Buffer | Iterable<Buffer>;
  /** Null for one string or buffer, whose length undici reads itself. */
  length: number | null;
}

/** A stream's payload from HANDED_ONCE_FROM_BYTES on is handed out once; others go as they are. */
function requestBody(payload: string | RelayedBytes, stream: boolean): RequestBody {
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
    if (!stream) {
      return { body: payload, length: null };
    }
    // Encoded once here: undici would make the same buffer of a string anyway.
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
    return bytes.length < HANDED_ONCE_FROM_BYTES
      ? { body: bytes, length: null }
      : { body: handedOnce([bytes]), length: bytes.length };
  }
  const length = payload.reduce((sum, slice) => sum + slice.length, 0);
  return { body: stream && length >= HANDED_ONCE_FROM_BYTES ? handedOnce([...payload]) : payload, length };
}

/**
 * `chunks` for one iteration: each is let go as it is handed out, and a second iteration gets none
 * (undici iterates a body once, when it writes it; a request it had to send again would fail its
 * declared length rather than send a body twice).
 */
export function handedOnce(chunks: (Buffer | undefined)[]): Iterable<Buffer> {
  let pending: (Buffer | undefined)[] | null = chunks;
  return {
    [Symbol.iterator](): Iterator<Buffer> {
      const taken = pending ?? [];
      pending = null;
      let at = 0;
      return {
        next(): IteratorResult<Buffer> {
          if (at === taken.length) {
            return { done: true, value: undefined };
          }
          const chunk = taken[at] as Buffer;
          taken[at++] = undefined;
          return { done: false, value: chunk };
        },
      };
    },
  };
}
