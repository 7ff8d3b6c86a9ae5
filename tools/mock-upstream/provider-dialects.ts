import { ServerResponse } from 'node:http';
import { isNativeMockRequest, respondAnthropicNative } from 'tools/mock-upstream/mock-anthropic-native';
import { respondGeminiEmbeddings } from 'tools/mock-upstream/mock-embeddings';
import {
  anthropicRefusal,
  respondAnthropicBlocks,
  wantsAnthropicBlocks,
} from 'tools/mock-upstream/mock-anthropic-blocks';
import { respondGemini } from 'tools/mock-upstream/mock-gemini';
import { MockUsageDetails } from 'tools/mock-upstream/mock-usage-details';

/**
 * The mock's Anthropic (Messages API) and Gemini (generateContent) dialects, so the gateway's
 * translating adapters can be tested over real HTTP. Same deterministic reply as the OpenAI
 * dialect: one completion token per word piece, one prompt token per word plus 3 per message.
 */
type Json = Record<string, unknown>;

export type Dialect = 'anthropic' | 'anthropic-count' | 'gemini' | 'gemini-stream' | 'gemini-embed';

const DIALECT_PATTERN =
  /^\/v1(?:beta)?\/(?:(messages)(\/count_tokens)?|models\/([^/:?]+):(generateContent|streamGenerateContent|batchEmbedContents))(?:\?.*)?$/;
const GEMINI_METHODS: Record<string, Dialect> = {
  generateContent: 'gemini',
  streamGenerateContent: 'gemini-stream',
  batchEmbedContents: 'gemini-embed',
};

export function matchDialect(method: string, path: string): Dialect | null {
  const match = method === 'POST' ? DIALECT_PATTERN.exec(path) : null;
  if (!match) {
    return null;
  }
  if (match[1]) {
    return match[2] ? 'anthropic-count' : 'anthropic';
  }
  return GEMINI_METHODS[match[4]];
}

/** Anthropic and Google authenticate with their own headers rather than a bearer token. */
export function dialectAuthorized(dialect: Dialect, headers: Record<string, string | string[] | undefined>): boolean {
  const key = dialect.startsWith('anthropic') ? headers['x-api-key'] : headers['x-goog-api-key'];
  return typeof key === 'string' && key !== '';
}

export const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const words = (text: string) => (text.trim() === '' ? 0 : text.trim().split(/\s+/).length);

export function textOfParts(parts: unknown): string {
  if (typeof parts === 'string') {
    return parts;
  }
  return Array.isArray(parts)
    ? parts.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join(' ')
    : '';
}

export interface DialectReply {
  pieces: string[];
  truncated: boolean;
  promptTokens: number;
  /** Asked for in the prompt (mock-usage-details.ts): cached, written and reasoning tokens on top. */
  details: MockUsageDetails;
}

const NO_DETAILS: MockUsageDetails = { cached: 0, cacheWrite: 0, reasoning: 0 };

export function replyFor(
  reply: MockReply,
  maxTokens: number | undefined,
  turns: unknown[],
  system: string,
): DialectReply {
  const all = reply.text.match(/\s*\S+\s*/g) ?? [];
  const truncated = maxTokens !== undefined && all.length > maxTokens;
  return {
    pieces: truncated ? all.slice(0, maxTokens) : all,
    truncated,
    promptTokens: mockPromptTokens(turns, system),
    details: reply.details ?? NO_DETAILS,
  };
}

/** The prompt tokens the mock bills: one per word plus 3 per turn, 3 for the request and 3 for a system text. */
export function mockPromptTokens(turns: unknown[], system: string): number {
  const prompt = turns.reduce<number>(
    (sum, turn) => sum + 3 + words(textOfParts(isRecord(turn) ? (turn.content ?? turn.parts) : '')),
    3,
  );
  return prompt + (system ? 3 + words(system) : 0);
}

export interface MockReply {
  text: string;
  details: MockUsageDetails | null;
}

export function respondInDialect(
  dialect: Dialect,
  res: ServerResponse,
  body: Json,
  reply: MockReply,
  sequence: number,
): void {
  if (dialect === 'anthropic') {
    const system = textOfParts(body.system);
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
    const result = replyFor(reply, maxTokens, Array.isArray(body.messages) ? body.messages : [], system);
    if (isNativeMockRequest(body)) {
      return respondAnthropicNative(res, result, sequence, body);
    }
    if (wantsAnthropicBlocks(body) || anthropicRefusal(body)) {
      const input = {
        text: reply.text,
        inputUsage: anthropicInput(result),
        extraThinkingTokens: result.details.reasoning,
      };
      return respondAnthropicBlocks(res, body, input, sequence);
    }
    return body.stream === true
      ? anthropicStream(res, result, sequence, body)
      : anthropicMessage(res, result, sequence, body);
  }
  if (dialect === 'gemini-embed') {
    return respondGeminiEmbeddings(res, body);
  }
  return respondGemini(res, body, reply, sequence, dialect === 'gemini-stream');
}

function anthropicMessage(res: ServerResponse, r: DialectReply, sequence: number, body: Json): void {
  const message = {
    id: `msg_mock_${sequence}`,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [{ type: 'text', text: r.pieces.join('') }],
    stop_reason: r.truncated ? 'max_tokens' : 'end_turn',
    usage: { ...anthropicInput(r), output_tokens: anthropicOutput(r) },
  };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
}

function anthropicStream(res: ServerResponse, r: DialectReply, sequence: number, body: Json): void {
  const event = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const message = { id: `msg_mock_${sequence}`, type: 'message', role: 'assistant', model: body.model, content: [] };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(event('message_start', { message: { ...message, usage: { ...anthropicInput(r), output_tokens: 1 } } }));
  res.write(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
  res.write(event('ping', {}));
  for (const piece of r.pieces) {
    res.write(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } }));
  }
  res.write(event('content_block_stop', { index: 0 }));
  const stop = r.truncated ? 'max_tokens' : 'end_turn';
  res.write(
    event('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: anthropicOutput(r) },
    }),
  );
  res.end(event('message_stop', {}));
}

/** Anthropic's input_tokens leave out the cache's reads and writes, reported apart. */
export function anthropicInput(r: DialectReply): Json {
  return {
    input_tokens: r.promptTokens,
    cache_creation_input_tokens: r.details.cacheWrite,
    cache_read_input_tokens: r.details.cached,
  };
}

/** Thinking is billed in output_tokens, not told apart. */
const anthropicOutput = (r: DialectReply) => r.pieces.length + r.details.reasoning;
