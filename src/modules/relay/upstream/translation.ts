import { TokenUsage } from 'src/modules/billing/metering.types';
import { ApiError } from 'src/common/errors/api-error';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import {
  isRecord,
  ProviderAdapter,
  StreamTranslator,
  UpstreamErrorDetails,
  UpstreamRequest,
  wireUsage,
} from 'src/modules/relay/upstream/provider-adapter';
import { DeliveredTokens } from 'src/modules/relay/upstream/delivered-tokens';
import { eventData } from 'src/modules/relay/upstream/sse-event-splitter';
import { saysAccountCannotServe } from 'src/modules/relay/upstream/upstream-error-text';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { CancelSignal } from 'src/common/http/cancel-signal';

/**
 * The toolkit of adapters that translate our wire format to other providers' APIs and back: what they
 * read from our requests, the answers they write in our format, and the base classes they extend.
 * Adapters take it as one namespace (`import * as wire`), so each names only what is its own.
 */

export type Json = Record<string, unknown>;

export interface Message {
  role: string;
  content: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
  name?: unknown;
  cache_control?: unknown;
}

/** A part's Anthropic `cache_control` (a prompt-cache breakpoint), relayed to Anthropic and ignored by others. */
export type Part = ({ kind: 'text'; text: string } | { kind: 'image'; url: string }) & { cacheControl?: Json };

/** The `cache_control` object a client put on a part, message or tool, if any. */
export const cacheControlOf = (value: unknown): Json | undefined =>
  isRecord(value) && isRecord(value.cache_control) ? value.cache_control : undefined;

const DATA_URI = /^data:([\w.+-]+\/[\w.+-]+);base64,(.*)$/s;

/** A message's content as text and image parts (a plain string is one text part). */
export function partsOf(content: unknown): Part[] {
  if (typeof content === 'string') {
    return content === '' ? [] : [{ kind: 'text', text: content }];
  }
  if (!Array.isArray(content)) {
    return [];
  }
  return content.flatMap((part): Part[] => {
    if (!isRecord(part)) {
      return [];
    }
    const cacheControl = cacheControlOf(part);
    const marked = cacheControl ? { cacheControl } : {};
    if (part.type === 'text' && typeof part.text === 'string') {
      return [{ kind: 'text', text: part.text, ...marked }];
    }
    if (part.type === 'image_url' && isRecord(part.image_url) && typeof part.image_url.url === 'string') {
      return [{ kind: 'image', url: part.image_url.url, ...marked }];
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

export interface ToolCall {
  id: string;
  name: string;
  arguments: Json;
}

/** An assistant message's tool calls, with their JSON arguments parsed (providers take objects). */
export function toolCallsOf(message: Message, at: string): ToolCall[] {
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
function chunkEvent(base: { id: string; created: number; model: string }, choice: Json | null, usage?: Json): string {
  const chunk: Json = { id: base.id, object: 'chat.completion.chunk', created: base.created, model: base.model };
  chunk.choices = choice ? [{ index: 0, logprobs: null, ...choice }] : [];
  if (usage) {
    chunk.usage = usage;
  }
  return `data: ${JSON.stringify(chunk)}`;
}

export const unixNow = () => Math.floor(Date.now() / 1000);

/** A `chat.completion` object in our wire format, from a provider's translated choices and usage. */
export function completion(
  id: string,
  modelId: string,
  fingerprint: string,
  choices: Json[],
  usage: TokenUsage | null,
): Json {
  return {
    id,
    object: 'chat.completion',
    created: unixNow(),
    model: modelId,
    system_fingerprint: fingerprint,
    choices,
    ...(usage ? { usage: wireUsage(usage) } : {}),
  };
}

/** A string field of a message, or '' (ids and names come from clients and may be anything). */
export const stringField = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * `{ error: { message } }`, as both Anthropic and Google shape their error bodies. Anthropic names the
 * kind in `type` (authentication_error, permission_error, billing_error; a low credit balance is an
 * invalid_request_error that says so); Google in `status` and in ErrorInfo `reason`s (API_KEY_INVALID…).
 */
function providerErrorDetails(upstream: unknown): UpstreamErrorDetails | null {
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

/** What translating adapters share: Anthropic and Google shape their error bodies alike. */
export abstract class TranslatingAdapter implements ProviderAdapter {
  abstract buildRequest(
    route: CatalogRoute,
    body: Json,
    chat: ChatRequest,
    signal?: CancelSignal,
  ): UpstreamRequest | Promise<UpstreamRequest>;
  abstract toCompletion(upstream: unknown, modelId: string): Json | null;
  abstract streamTranslator(route: CatalogRoute, chat: ChatRequest): StreamTranslator;

  errorDetails(upstream: unknown): UpstreamErrorDetails | null {
    return providerErrorDetails(upstream);
  }
}

/**
 * What translating stream translators share: reading each event's JSON object, our chunk identity,
 * the end flag and the delivered tokens.
 */
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

  /** The wire events for one upstream event's JSON object. */
  protected abstract translatePayload(payload: Json): string[];
  abstract usage(): TokenUsage | null;

  translate(event: string): string[] {
    const data = eventData(event);
    const payload: unknown = data ? JSON.parse(data) : null;
    return isRecord(payload) ? this.translatePayload(payload) : [];
  }

  finished(): boolean {
    return this.done;
  }

  deliveredTokens(): number {
    return this.delivered.total();
  }

  usageEvent(usage: TokenUsage): string {
    return chunkEvent(this.base, null, wireUsage(usage));
  }

  /** A chunk of this stream with one choice. */
  protected chunk(choice: Json): string {
    return chunkEvent(this.base, choice);
  }

  /** The usage chunk the client asked for, once the upstream has reported usage. */
  protected usageChunks(usage: TokenUsage | null): string[] {
    return this.clientWantsUsage && usage ? [this.usageEvent(usage)] : [];
  }
}
