import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';

// A hold must cover the worst case, so the prompt estimate errs high: tokenizers differ between
// model families, and chat framing adds a few tokens per message.
const PER_MESSAGE_OVERHEAD = 4;
const PER_REQUEST_OVERHEAD = 3;
const IMAGE_TOKENS = 1_500;
const SAFETY_NUMERATOR = 11n;
const SAFETY_DENOMINATOR = 10n;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/** Prompt tokens of a validated request, estimated with a real tokenizer (cl100k) plus a 10% margin. */
export function estimatePromptTokens(messages: unknown[]): number {
  let tokens = PER_REQUEST_OVERHEAD;
  for (const message of messages) {
    tokens += PER_MESSAGE_OVERHEAD;
    if (!isObject(message)) {
      continue;
    }
    const content = message.content;
    if (typeof content === 'string') {
      tokens += countTokens(content);
    } else if (Array.isArray(content)) {
      for (const part of content) {
        tokens += !isObject(part) ? 0 : part.type === 'text' ? countTokens(String(part.text)) : IMAGE_TOKENS;
      }
    }
    if (message.tool_calls !== undefined) {
      tokens += countTokens(JSON.stringify(message.tool_calls));
    }
  }
  return Number((BigInt(tokens) * SAFETY_NUMERATOR) / SAFETY_DENOMINATOR) + 1;
}

/** Completion tokens of text the client received, when the upstream reported no usage. */
export function countCompletionTokens(text: string): number {
  return text === '' ? 0 : countTokens(text);
}
