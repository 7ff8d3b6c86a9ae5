import { ErrorBody } from 'src/common/errors/api-error';
import { StreamWriter } from 'src/modules/relay/reply-format';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import { eventData } from 'src/modules/relay/upstream/sse-event-splitter';
import {
  functionCallItem,
  messageItem,
  newId,
  newIdentity,
  outputTextPart,
  ResponseIdentity,
  responseObject,
  ResponseStatus,
  responseUsage,
  statusOf,
} from 'src/modules/responses/response-object';
import { ResponseEcho } from 'src/modules/responses/responses-request';
import { withFields } from 'src/common/with-fields';

type Json = Record<string, unknown>;

interface Part {
  type: 'output_text' | 'refusal';
  text: string;
}

interface MessageState {
  kind: 'message';
  id: string;
  outputIndex: number;
  parts: Part[];
}

interface CallState {
  kind: 'function_call';
  id: string;
  outputIndex: number;
  callId: string;
  name: string;
  arguments: string;
}

type ItemState = MessageState | CallState;

/**
 * Writes a stream of chat chunks as the Responses API's named events: `response.created` and
 * `response.in_progress` first; for text, `response.output_item.added`, `response.content_part.added`,
 * `response.output_text.delta`… and their `.done` events; for each tool call, an item with
 * `response.function_call_arguments.delta`… and `.done`; then `response.completed` (or
 * `response.incomplete`) with the usage. A stream cut short ends with `response.failed`. Every event
 * carries its `sequence_number`.
 */
export class ResponsesStreamWriter implements StreamWriter {
  private readonly identity: ResponseIdentity = newIdentity();
  private sequence = 0;
  private started = false;
  private over = false;
  /** Every item in output order; open ones are still receiving deltas. */
  private readonly items: ItemState[] = [];
  private readonly open = new Set<ItemState>();
  private message: MessageState | null = null;
  private readonly calls = new Map<number, CallState>();
  private finishReason: unknown = null;
  private usage: Json | null = null;

  /** `onEnd` receives the `response` of a stream that ended normally (completed or incomplete). */
  constructor(
    private readonly echo: ResponseEcho,
    private readonly onEnd: (response: Json) => void = () => undefined,
  ) {}

  write(events: string[]): string {
    let out = this.start();
    for (const event of events) {
      if (this.over) {
        break;
      }
      const chunk = parseChunk(event);
      if (chunk === 'comment') {
        out += `${event}\n\n`;
      } else if (chunk && isRecord(chunk.error)) {
        out += this.fail({ error: chunk.error } as unknown as ErrorBody);
      } else if (chunk) {
        out += this.chunk(chunk);
      }
    }
    return out;
  }

  end(): string {
    if (this.over) {
      return '';
    }
    let out = this.start() + this.closeAll();
    const { status, incompleteReason } = statusOf(this.finishReason);
    const response = this.response(status, incompleteReason);
    out += this.event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
    this.over = true;
    this.onEnd(response);
    return out;
  }

  fail(error: ErrorBody): string {
    if (this.over) {
      return '';
    }
    const { message, code } = error.error;
    const out = this.start();
    this.over = true;
    const response = this.response('failed', null, { code: code ?? 'server_error', message });
    return out + this.event('response.failed', { response });
  }

  private start(): string {
    if (this.started) {
      return '';
    }
    this.started = true;
    const response = this.response('in_progress', null);
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private chunk(chunk: Json): string {
    let out = '';
    const usage = responseUsage(chunk.usage);
    if (usage) {
      this.usage = usage;
    }
    const choice = Array.isArray(chunk.choices) && isRecord(chunk.choices[0]) ? chunk.choices[0] : null;
    const delta = choice && isRecord(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      out += this.textDelta('output_text', delta.content);
    }
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      out += this.textDelta('refusal', delta.refusal);
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls as unknown[]) {
        out += isRecord(call) ? this.toolCallDelta(call) : '';
      }
    }
    if (choice && typeof choice.finish_reason === 'string') {
      this.finishReason = choice.finish_reason;
    }
    return out;
  }

  private textDelta(type: Part['type'], delta: string): string {
    let out = '';
    if (!this.message) {
      this.message = this.addItem({ kind: 'message', id: newId('msg'), outputIndex: this.items.length, parts: [] });
      out += this.event('response.output_item.added', {
        output_index: this.message.outputIndex,
        item: messageItem(this.message.id, 'in_progress', []),
      });
    }
    const message = this.message;
    let part = message.parts.at(-1);
    if (part?.type !== type) {
      part = { type, text: '' };
      message.parts.push(part);
      out += this.event(
        'response.content_part.added',
        withFields(this.partPlace(message), { part: partObject({ type, text: '' }) }),
      );
    }
    part.text += delta;
    const name = type === 'output_text' ? 'response.output_text.delta' : 'response.refusal.delta';
    const fields = type === 'output_text' ? { delta, logprobs: [] } : { delta };
    return out + this.event(name, withFields(this.partPlace(message), fields));
  }

  private toolCallDelta(delta: Json): string {
    let out = '';
    const index = typeof delta.index === 'number' ? delta.index : 0;
    const fn = isRecord(delta.function) ? delta.function : {};
    let call = this.calls.get(index);
    if (!call) {
      // Text comes before the calls in an assistant turn: its item is done once a call starts.
      out += this.message ? this.close(this.message) : '';
      this.message = null;
      call = this.addItem({
        kind: 'function_call',
        id: newId('fc'),
        outputIndex: this.items.length,
        callId: typeof delta.id === 'string' ? delta.id : newId('call'),
        name: typeof fn.name === 'string' ? fn.name : '',
        arguments: '',
      });
      this.calls.set(index, call);
      out += this.event('response.output_item.added', {
        output_index: call.outputIndex,
        item: functionCallItem(call.id, 'in_progress', withFields(call, { arguments: '' })),
      });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      call.arguments += fn.arguments;
      out += this.event('response.function_call_arguments.delta', {
        item_id: call.id,
        output_index: call.outputIndex,
        delta: fn.arguments,
      });
    }
    return out;
  }

  private addItem<T extends ItemState>(item: T): T {
    this.items.push(item);
    this.open.add(item);
    return item;
  }

  private closeAll(): string {
    let out = '';
    for (const item of this.items) {
      out += this.open.has(item) ? this.close(item) : '';
    }
    this.message = null;
    return out;
  }

  /** The `.done` events of an item, and of its parts. */
  private close(item: ItemState): string {
    this.open.delete(item);
    const status = this.itemStatus();
    if (item.kind === 'function_call') {
      return (
        this.event('response.function_call_arguments.done', {
          item_id: item.id,
          output_index: item.outputIndex,
          name: item.name,
          arguments: item.arguments,
        }) + this.event('response.output_item.done', { output_index: item.outputIndex, item: this.itemObject(item) })
      );
    }
    let out = '';
    item.parts.forEach((part, index) => {
      const place = { item_id: item.id, output_index: item.outputIndex, content_index: index };
      out +=
        part.type === 'output_text'
          ? this.event('response.output_text.done', withFields(place, { text: part.text, logprobs: [] }))
          : this.event('response.refusal.done', withFields(place, { refusal: part.text }));
      out += this.event('response.content_part.done', withFields(place, { part: partObject(part) }));
    });
    return (
      out +
      this.event('response.output_item.done', {
        output_index: item.outputIndex,
        item: messageItem(item.id, status, item.parts.map(partObject)),
      })
    );
  }

  private itemObject(item: ItemState, status: ResponseStatus = this.itemStatus()): Json {
    return item.kind === 'message'
      ? messageItem(item.id, status, item.parts.map(partObject))
      : functionCallItem(item.id, status, item);
  }

  /** Items end complete, unless the answer was cut at max_output_tokens or by a filter. */
  private itemStatus(): ResponseStatus {
    return statusOf(this.finishReason).status === 'completed' ? 'completed' : 'incomplete';
  }

  private response(status: ResponseStatus, incompleteReason: string | null, error: Json | null = null): Json {
    const output =
      status === 'in_progress'
        ? []
        : this.items.map((item) => this.itemObject(item, this.open.has(item) ? 'incomplete' : this.itemStatus()));
    return responseObject(this.identity, this.echo, { status, incompleteReason, error, output, usage: this.usage });
  }

  private partPlace(message: MessageState): Json {
    return { item_id: message.id, output_index: message.outputIndex, content_index: message.parts.length - 1 };
  }

  private event(type: string, fields: Json): string {
    const data = { type, sequence_number: this.sequence++, ...fields };
    return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  }
}

function partObject(part: Part): Json {
  return part.type === 'output_text' ? outputTextPart(part.text) : { type: 'refusal', refusal: part.text };
}

/** A chat event's JSON object; 'comment' for a keep-alive; null for anything else (`[DONE]`, garbage). */
function parseChunk(event: string): Json | 'comment' | null {
  if (event.startsWith(':')) {
    return 'comment';
  }
  const data = eventData(event);
  if (data === null || data === '[DONE]') {
    return null;
  }
  try {
    const parsed: unknown = JSON.parse(data);
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}
