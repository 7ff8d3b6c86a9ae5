import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import {
  functionCallItem,
  messageItem,
  newId,
  newIdentity,
  outputTextPart,
  responseObject,
  responseUsage,
  statusOf,
} from 'src/modules/responses/response-object';
import { ResponseEcho } from 'src/modules/responses/responses-request';

type Json = Record<string, unknown>;

/**
 * A `chat.completion` (one choice, usage filled in) as a Responses API `response`: the assistant's text
 * (or refusal) as a `message` item, each tool call as a `function_call` item after it.
 */
export function completionToResponse(completion: Json, echo: ResponseEcho): Json {
  const choice = Array.isArray(completion.choices) && isRecord(completion.choices[0]) ? completion.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]).filter(isRecord) : [];
  const output: Json[] = [];
  const content: Json[] = [];
  if (typeof message.content === 'string' && (message.content !== '' || toolCalls.length === 0)) {
    content.push(outputTextPart(message.content));
  }
  if (typeof message.refusal === 'string' && message.refusal !== '') {
    content.push({ type: 'refusal', refusal: message.refusal });
  }
  if (content.length > 0) {
    output.push(messageItem(newId('msg'), 'completed', content));
  }
  for (const call of toolCalls) {
    const fn = isRecord(call.function) ? call.function : {};
    output.push(
      functionCallItem(newId('fc'), 'completed', {
        callId: typeof call.id === 'string' ? call.id : newId('call'),
        name: typeof fn.name === 'string' ? fn.name : '',
        arguments: typeof fn.arguments === 'string' ? fn.arguments : '',
      }),
    );
  }
  const { status, incompleteReason } = statusOf(choice.finish_reason);
  return responseObject(newIdentity(), echo, {
    status,
    incompleteReason,
    output,
    usage: responseUsage(completion.usage),
  });
}
