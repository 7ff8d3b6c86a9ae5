import { randomBytes } from 'node:crypto';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';

type Json = Record<string, unknown>;

export const newMessageId = () => `msg_${randomBytes(12).toString('base64url')}`;
const newToolUseId = () => `toolu_${randomBytes(12).toString('base64url')}`;

/** Chat's finish_reason as Anthropic's stop_reason. Chat keeps no trace of which stop sequence matched. */
export function stopReason(finishReason: unknown): string {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Chat usage as Anthropic's: the cached part of the prompt, when the upstream said it, is not counted twice. */
export function anthropicUsage(usage: unknown): Json {
  if (!isRecord(usage)) {
    return { input_tokens: 0, output_tokens: 0 };
  }
  const prompt = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
  const output = typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0;
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const cached = typeof details.cached_tokens === 'number' ? Math.min(details.cached_tokens, prompt) : null;
  if (cached === null) {
    return { input_tokens: prompt, output_tokens: output };
  }
  return { input_tokens: prompt - cached, cache_read_input_tokens: cached, output_tokens: output };
}

/** A tool call's argument text as the `input` object; text that is not a JSON object becomes `{}`. */
export function toolInput(argumentsText: string): Json {
  try {
    const parsed: unknown = JSON.parse(argumentsText === '' ? '{}' : argumentsText);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

export const toolUseId = (id: unknown) => (typeof id === 'string' && id !== '' ? id : newToolUseId());

/** A `chat.completion` (one choice, usage filled in) as an Anthropic `message`. */
export function completionToMessage(completion: Json, model: string): Json {
  const choice = Array.isArray(completion.choices) && isRecord(completion.choices[0]) ? completion.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]).filter(isRecord) : [];
  const content: Json[] = [];
  const text = typeof message.content === 'string' ? message.content : '';
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  if (text + refusal !== '' || toolCalls.length === 0) {
    content.push({ type: 'text', text: text + refusal });
  }
  for (const call of toolCalls) {
    const fn = isRecord(call.function) ? call.function : {};
    content.push({
      type: 'tool_use',
      id: toolUseId(call.id),
      name: typeof fn.name === 'string' ? fn.name : '',
      input: toolInput(typeof fn.arguments === 'string' ? fn.arguments : ''),
    });
  }
  return {
    id: newMessageId(),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(choice.finish_reason),
    stop_sequence: null,
    usage: anthropicUsage(completion.usage),
  };
}
