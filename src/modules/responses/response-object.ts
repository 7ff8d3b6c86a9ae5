import { randomBytes } from 'node:crypto';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import { ResponseEcho } from 'src/modules/responses/responses-request';

type Json = Record<string, unknown>;

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** An id in OpenAI's style (`resp_…`, `msg_…`, `fc_…`), random: an answer kept is found by it (StoredResponses). */
export const newId = (prefix: string) => `${prefix}_${randomBytes(16).toString('hex')}`;

/** The identity of one response: the same in every event of its stream. */
export interface ResponseIdentity {
  id: string;
  createdAt: number;
}

export function newIdentity(): ResponseIdentity {
  return { id: newId('resp'), createdAt: Math.floor(Date.now() / 1000) };
}

/** The `response` object, as the answer and the lifecycle events of a stream carry it. */
export function responseObject(
  identity: ResponseIdentity,
  echo: ResponseEcho,
  state: {
    status: ResponseStatus;
    output: Json[];
    usage: Json | null;
    incompleteReason?: string | null;
    error?: Json | null;
  },
): Json {
  return {
    id: identity.id,
    object: 'response',
    created_at: identity.createdAt,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    max_tool_calls: null,
    model: echo.model,
    output: state.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: null,
    reasoning: echo.reasoning,
    service_tier: 'default',
    store: echo.store,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: echo.truncation,
    usage: state.usage,
    user: echo.user,
    metadata: echo.metadata,
  };
}

/** A chat finish reason as the response's status, and why it is incomplete. */
export function statusOf(finishReason: unknown): { status: ResponseStatus; incompleteReason: string | null } {
  switch (finishReason) {
    case 'length':
      return { status: 'incomplete', incompleteReason: 'max_output_tokens' };
    case 'content_filter':
      return { status: 'incomplete', incompleteReason: 'content_filter' };
    default:
      return { status: 'completed', incompleteReason: null };
  }
}

/** Chat usage (`prompt_tokens`…) in the Responses shape (`input_tokens`…), with the details clients read. */
export function responseUsage(usage: unknown): Json | null {
  if (!isRecord(usage) || typeof usage.prompt_tokens !== 'number' || typeof usage.completion_tokens !== 'number') {
    return null;
  }
  const promptDetails = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const completionDetails = isRecord(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: numberOr0(promptDetails.cached_tokens) },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: numberOr0(completionDetails.reasoning_tokens) },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}

const numberOr0 = (value: unknown) => (typeof value === 'number' ? value : 0);

export function messageItem(id: string, status: ResponseStatus, content: Json[]): Json {
  return { id, type: 'message', status, role: 'assistant', content };
}

export const outputTextPart = (text: string): Json => ({ type: 'output_text', text, annotations: [], logprobs: [] });

export function functionCallItem(
  id: string,
  status: ResponseStatus,
  call: { callId: string; name: string; arguments: string },
): Json {
  return { id, type: 'function_call', status, call_id: call.callId, name: call.name, arguments: call.arguments };
}
