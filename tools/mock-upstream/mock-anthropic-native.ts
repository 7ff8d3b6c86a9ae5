import { ServerResponse } from 'node:http';
import { anthropicInput, DialectReply } from 'tools/mock-upstream/provider-dialects';

/**
 * The mock's answers to Anthropic clients whose requests pass through the gateway untranslated: only
 * such a request can carry the `mock` field to the Anthropic dialect (a translated one never does), so
 * its switches select this: `mock.thinking` (a thinking block before the text, its words streamed as
 * `thinking_delta`s and billed as output), `mock.break_after` (the stream is cut after that many
 * deltas), `mock.error_after` (after that many deltas Anthropic's own `error` event ends the stream)
 * and `mock.event_delay_ms` (a pause between events). The request itself is recorded as every request
 * is (`MockUpstream.requests`).
 */
type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const MOCK_SIGNATURE = 'mock-thinking-signature';

/** The pieces a mock thinking text is streamed and billed in: one output token each. */
export const mockThinkingPieces = (text: string): string[] => text.match(/\s*\S+\s*/g) ?? [];

/** Whether this Anthropic request came untranslated with the mock's switches. */
export const isNativeMockRequest = (body: Json): boolean => isRecord(body.mock);

export function respondAnthropicNative(res: ServerResponse, r: DialectReply, sequence: number, body: Json): void {
  const mock = body.mock as Json;
  const thinking = typeof mock.thinking === 'string' ? mock.thinking : null;
  const thought = thinking === null ? [] : mockThinkingPieces(thinking);
  const outputTokens = thought.length + r.pieces.length + r.details.reasoning;
  const stop = r.truncated ? 'max_tokens' : 'end_turn';
  const message = { id: `msg_mock_${sequence}`, type: 'message', role: 'assistant', model: body.model };
  if (body.stream !== true) {
    const content = [
      ...(thinking === null ? [] : [{ type: 'thinking', thinking, signature: MOCK_SIGNATURE }]),
      { type: 'text', text: r.pieces.join('') },
    ];
    const answer = { ...message, content, stop_reason: stop, stop_sequence: null, usage: usage(r, outputTokens) };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    return;
  }
  const events: string[] = [];
  const stopAfter = [mock.break_after, mock.error_after].find((n): n is number => typeof n === 'number');
  const breakAfter = stopAfter ?? Infinity;
  let deltas = 0;
  const push = (type: string, data: Json) => {
    events.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    deltas += type === 'content_block_delta' ? 1 : 0;
    return deltas >= breakAfter;
  };
  const cut =
    push('message_start', { message: { ...message, content: [], usage: usage(r, 1) } }) ||
    (thinking !== null && streamBlock(push, 0, 'thinking', thought)) ||
    streamBlock(push, thinking === null ? 0 : 1, 'text', r.pieces) ||
    push('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }) ||
    push('message_stop', {});
  const overloaded = { type: 'overloaded_error', message: 'Overloaded' };
  if (cut && typeof mock.error_after === 'number') {
    events.push(`event: error\ndata: ${JSON.stringify({ type: 'error', error: overloaded })}\n\n`);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const delayMs = typeof mock.event_delay_ms === 'number' ? mock.event_delay_ms : 0;
  writeSpaced(res, events, delayMs, cut && typeof mock.error_after !== 'number');
}

/** Writes the events `delayMs` apart, then ends the answer, or destroys it mid-stream when `broken`. */
function writeSpaced(res: ServerResponse, events: string[], delayMs: number, broken: boolean): void {
  let timer: NodeJS.Timeout | undefined;
  res.once('close', () => clearTimeout(timer));
  const step = (from: number): void => {
    for (let next = from; next < events.length && !res.destroyed; next++) {
      if (next === events.length - 1) {
        // Destroyed only once the last write is flushed: an immediate destroy would drop what was corked.
        res.write(events[next], () => (broken ? res.destroy() : res.end()));
        return;
      }
      res.write(events[next]);
      if (delayMs > 0) {
        timer = setTimeout(() => step(next + 1), delayMs);
        return;
      }
    }
  };
  step(0);
}

/** One content block's events; true once the stream is to be cut. */
function streamBlock(
  push: (type: string, data: Json) => boolean,
  index: number,
  kind: 'thinking' | 'text',
  pieces: string[],
): boolean {
  const start = kind === 'thinking' ? { type: 'thinking', thinking: '', signature: '' } : { type: 'text', text: '' };
  if (push('content_block_start', { index, content_block: start }) || push('ping', {})) {
    return true;
  }
  for (const piece of pieces) {
    const delta =
      kind === 'thinking' ? { type: 'thinking_delta', thinking: piece } : { type: 'text_delta', text: piece };
    if (push('content_block_delta', { index, delta })) {
      return true;
    }
  }
  if (
    kind === 'thinking' &&
    push('content_block_delta', { index, delta: { type: 'signature_delta', signature: MOCK_SIGNATURE } })
  ) {
    return true;
  }
  return push('content_block_stop', { index });
}

function usage(r: DialectReply, outputTokens: number): Json {
  return { ...anthropicInput(r), output_tokens: outputTokens };
}
