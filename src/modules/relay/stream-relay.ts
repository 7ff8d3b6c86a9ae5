import { FastifyReply } from 'fastify';
import { once } from 'node:events';
import { ServerResponse } from 'node:http';
import { ErrorBody } from 'src/common/errors/api-error';
import { RelayOutput } from 'src/modules/relay/reply-format';
import { DeadlineExceeded } from 'src/modules/relay/admission/request-lifetime';
import { eventData, SseEventSplitter } from 'src/modules/relay/upstream/sse-event-splitter';
import { UpstreamBody } from 'src/modules/relay/upstream/upstream-client';
import { CancelSignal } from 'src/common/http/cancel-signal';
import { flattenHeaderBlock } from 'src/common/http/header-block';
import { TurnCork } from 'src/common/http/turn-cork';
import { withFields } from 'src/common/with-fields';

export type StreamOutcome =
  /** Nothing was sent to the client and the upstream's answer was not a valid stream: try another route. */
  | 'abnormal'
  | 'completed'
  | 'client_aborted'
  /** The upstream broke off after the client got the first bytes; the client got an error event. */
  | 'upstream_broken';

const BROKEN_EVENT = errorEvent(
  'The upstream provider stopped the stream before it finished.',
  'upstream_stream_broken',
);
const DEADLINE_EVENT = errorEvent('The completion did not finish within the time limit.', 'request_timeout');

/** The client left written data unread for CLIENT_DRAIN_TIMEOUT_MS: it is cut like a hang-up. */
class DrainTimeout extends Error {}

export interface RelayLimits {
  signal: CancelSignal;
  /** How long a write may wait for the client to read before the client is cut. */
  drainTimeoutMs: number;
  /** Called once the first event proved the upstream answers properly and the 200 went out. */
  onStart?: () => void;
}

/**
 * Pipes an upstream event stream to the client event by event: each event leaves at the end of the
 * turn its last byte arrives in (in the answer's last turn, with the end), never buffered whole.
 * The 200 is only committed once the first event proves the upstream is answering properly, so a
 * bad upstream can still fail over to another route.
 */
export async function relayStream(
  body: UpstreamBody,
  reply: FastifyReply,
  { translator, writer }: RelayOutput,
  { signal, drainTimeoutMs, onStart }: RelayLimits,
  /** Runs after the last chunk and before the stream's end (billing records a complete answer here); may add chat events. */
  beforeDone: () => Promise<string[]>,
): Promise<StreamOutcome> {
  const splitter = new SseEventSplitter();
  const raw = reply.raw;
  // The events of a turn leave together; those of the last turn, with the end (turn-cork.ts).
  const client = new TurnCork(raw);
  let started = false;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const events = splitter.push(chunk);
      if (events.length === 0) {
        continue;
      }
      if (!started) {
        if (!looksValid(events[0])) {
          body.destroy();
          return 'abnormal';
        }
        reply.hijack();
        raw.writeHead(
          200,
          withFields(reply.getHeaders() as Record<string, string>, {
            'content-type': 'text/event-stream; charset=utf-8',
            'cache-control': 'no-cache',
            'x-accel-buffering': 'no',
          }),
        );
        // The block stays with the response for the stream's life: one string, not a rope of pieces.
        flattenHeaderBlock(raw);
        started = true;
        onStart?.();
      }
      const translated: string[] = [];
      for (const event of events) {
        translated.push(...translator.translate(event));
      }
      const out = translated.length === 0 ? '' : writer.write(translated);
      if (out !== '' && !client.write(out)) {
        await drained(raw, signal, drainTimeoutMs);
      }
    }
  } catch (error) {
    // The upstream body failed (reset, stalled, oversized, unreadable), the client went away or stopped
    // reading, or the deadline passed. Leaving the loop destroyed the upstream body: its call is cut.
    if (signal.aborted) {
      if (!started) {
        throw signal.reason;
      }
      if (!(signal.reason instanceof DeadlineExceeded)) {
        return 'client_aborted';
      }
      client.end(writer.fail(DEADLINE_EVENT));
      return 'upstream_broken';
    }
    if (error instanceof DrainTimeout) {
      raw.destroy();
      return 'client_aborted';
    }
  }
  if (!started) {
    return 'abnormal';
  }
  if (translator.finished() && splitter.rest() === '') {
    const extra = await client.holdWhile(beforeDone);
    client.end((extra.length === 0 ? '' : writer.write(extra)) + writer.end());
    return 'completed';
  }
  client.end(writer.fail(BROKEN_EVENT));
  return 'upstream_broken';
}

/** Waits for the client to read what was written, at most `timeoutMs`, or until the request is aborted. */
async function drained(raw: ServerResponse, signal: CancelSignal, timeoutMs: number): Promise<void> {
  const wait = new AbortController();
  const stop = () => wait.abort();
  const timer = setTimeout(stop, timeoutMs);
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) {
    stop();
  }
  try {
    await once(raw, 'drain', { signal: wait.signal });
  } catch (error) {
    throw signal.aborted ? error : new DrainTimeout();
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  }
}

function errorEvent(message: string, code: string): ErrorBody {
  return { error: { message, type: 'server_error', param: null, code } };
}

/** A keep-alive comment, or a JSON object that is not an error. */
function looksValid(event: string): boolean {
  if (event.startsWith(':')) {
    return true;
  }
  const data = eventData(event);
  if (data === null || data === '[DONE]') {
    return false;
  }
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === 'object' && parsed !== null && !('error' in parsed);
  } catch {
    return false;
  }
}
