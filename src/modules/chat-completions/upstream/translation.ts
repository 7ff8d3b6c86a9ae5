import { TokenUsage } from 'src/modules/billing/metering.types';
import { ApiError } from 'src/common/errors/api-error';
import {
  isRecord,
  StreamTranslator,
  UpstreamErrorDetails,
  wireUsage,
} from 'src/modules/chat-completions/upstream/provider-adapter';
import { DeliveredTokens } from 'src/modules/chat-completions/upstream/delivered-tokens';
import { saysAccountCannotServe } from 'src/modules/chat-completions/upstream/upstream-error-text';

/** Shared pieces for translating our wire format to other providers' APIs. */

export type Json = Record<string, unknown>;

export interface WireMessage {
  role: string;
  content: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
  name?: unknown;
}

export type WirePart = { kind: 'text'; text: string } | { kind: 'image'; url: string };

const DATA_URI = /^data:([\w.+-]+\/[\w.+-]+);base64,(.*)$/s;

/** A message's content as text and image parts (a plain string is one text part). */
export function partsOf(content: unknown): WirePart[] {
  if (typeof content === 'string') {
    return content === '' ? [] : [{ kind: 'text', text: content }];
  }
  if (!Array.isArray(content)) {
    return [];
  }
  return content.flatMap((part): WirePart[] => {
    if (!isRecord(part)) {
      return [];
    }
    if (part.type === 'text' && typeof part.text === 'string') {
      return [{ kind: 'text', text: part.text }];
    }
    if (part.type === 'image_url' && isRecord(part.image_url) && typeof part.image_url.url === 'string') {
      return [{ kind: 'image', url: part.image_url.url }];
    }
    return [];
  });
}

/** The text of a message's content, for roles that only take text (system, tool results). */
export function textOf(content: unknown): string {
  return partsOf(content)
    .map((part) => (part.kind === 'text' ? part.text : ''))
    .join('');
}

export function dataUri(url: string): { mediaType: string; data: string } | null {
  const match = DATA_URI.exec(url);
  return match ? { mediaType: match[1], data: match[2] } : null;
}

export interface WireToolCall {
  id: string;
  name: string;
  arguments: Json;
}

/** An assistant message's tool calls, with their JSON arguments parsed (providers take objects). */
export function toolCallsOf(message: WireMessage, at: string): WireToolCall[] {
  if (!Array.isArray(message.tool_calls)) {
    return [];
  }
  return message.tool_calls.map((call: unknown, index) => {
    const fn = isRecord(call) && isRecord(call.function) ? call.function : {};
    const id = isRecord(call) && typeof call.id === 'string' ? call.id : `call_${index}`;
    let parsed: unknown = {};
    try {
      parsed = typeof fn.arguments === 'string' && fn.arguments !== '' ? JSON.parse(fn.arguments) : {};
    } catch {
      throw ApiError.invalid(
        `${at}.tool_calls[${index}].function.arguments must be a JSON object.`,
        `${at}.tool_calls`,
      );
    }
    return { id, name: typeof fn.name === 'string' ? fn.name : '', arguments: isRecord(parsed) ? parsed : {} };
  });
}

/** Our `tools` as name, description and JSON-schema parameters. */
export function functionTools(tools: unknown): { name: string; description?: string; parameters: Json }[] {
  if (!Array.isArray(tools)) {
    return [];
  }
  return tools.flatMap((tool: unknown) => {
    const fn = isRecord(tool) && isRecord(tool.function) ? tool.function : null;
    if (!fn || typeof fn.name !== 'string') {
      return [];
    }
    const description = typeof fn.description === 'string' ? fn.description : undefined;
    const parameters = isRecord(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
    return [{ name: fn.name, description, parameters }];
  });
}

export function stopSequences(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') {
    return [stop];
  }
  return Array.isArray(stop) && stop.length > 0 ? (stop as string[]) : undefined;
}

/** A chat.completion.chunk event in our wire format. */
export function chunkEvent(
  base: { id: string; created: number; model: string },
  choice: Json | null,
  usage?: Json,
): string {
  const chunk: Json = { id: base.id, object: 'chat.completion.chunk', created: base.created, model: base.model };
  chunk.choices = choice ? [{ index: 0, logprobs: null, ...choice }] : [];
  if (usage) {
    chunk.usage = usage;
  }
  return `data: ${JSON.stringify(chunk)}`;
}

export const unixNow = () => Math.floor(Date.now() / 1000);

/** A string field of a message, or '' (ids and names come from clients and may be anything). */
export const stringField = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * `{ error: { message } }`, as both Anthropic and Google shape their error bodies. Anthropic names the
 * kind in `type` (authentication_error, permission_error, billing_error; a low credit balance is an
 * invalid_request_error that says so); Google in `status` and in ErrorInfo `reason`s (API_KEY_INVALID…).
 */
export function providerErrorDetails(upstream: unknown): UpstreamErrorDetails | null {
  const error = isRecord(upstream) && isRecord(upstream.error) ? upstream.error : null;
  if (!error || typeof error.message !== 'string') {
    return null;
  }
  const reasons = Array.isArray(error.details)
    ? (error.details as unknown[]).map((detail) => (isRecord(detail) ? detail.reason : undefined))
    : [];
  const kinds = [error.type, error.status, ...reasons].filter((kind): kind is string => typeof kind === 'string');
  const channelCannotServe =
    kinds.some((kind) => CHANNEL_ACCOUNT_ERRORS.has(kind)) || saysAccountCannotServe(error.message);
  return { message: error.message, param: null, channelCannotServe };
}

const CHANNEL_ACCOUNT_ERRORS = new Set([
  'authentication_error',
  'permission_error',
  'billing_error',
  'PERMISSION_DENIED',
  'UNAUTHENTICATED',
  'API_KEY_INVALID',
  'API_KEY_EXPIRED',
  'BILLING_DISABLED',
  'SERVICE_DISABLED',
  'CONSUMER_SUSPENDED',
  'USER_LOCATION_INVALID',
]);

/** What translating stream translators share: our chunk identity, the end flag and the delivered tokens. */
export abstract class TranslatingStreamTranslator implements StreamTranslator {
  protected readonly base = { id: `chatcmpl-${unixNow()}`, created: unixNow(), model: '' };
  protected done = false;
  protected readonly delivered = new DeliveredTokens();

  constructor(
    modelId: string,
    protected readonly clientWantsUsage: boolean,
  ) {
    this.base.model = modelId;
  }

  abstract translate(event: string): string[];
  abstract usage(): TokenUsage | null;

  finished(): boolean {
    return this.done;
  }

  deliveredTokens(): number {
    return this.delivered.total();
  }

  usageEvent(usage: TokenUsage): string {
    return chunkEvent(this.base, null, wireUsage(usage));
  }
}
