import { ApiError } from 'src/common/errors/api-error';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { geminiSchema } from 'src/modules/relay/upstream/gemini-schema';
import { InlineImage } from 'src/modules/relay/upstream/image-fetch/image-fetcher';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import * as wire from 'src/modules/relay/upstream/translation';

/**
 * Our chat-completions body as a Gemini generateContent request (docs/providers.md, "Gemini"). Pure:
 * the images given by URL come already fetched, in `images`. What Gemini cannot do is a 400 naming
 * the parameter, never a silent drop.
 */

/** Gemini's thinking budget (tokens) per `reasoning_effort`. */
export const THINKING_BUDGETS: Record<string, number> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576 };

const TOOL_CHOICE_MODES: Record<string, string> = { auto: 'AUTO', none: 'NONE', required: 'ANY' };

/** The image URLs (not data URIs) of the request's messages, which the gateway fetches for Gemini. */
export function imageUrlsOf(body: wire.Json): string[] {
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  return messages.flatMap((message) =>
    wire
      .partsOf(isRecord(message) ? message.content : undefined)
      .flatMap((part) => (part.kind === 'image' && !part.url.startsWith('data:') ? [part.url] : [])),
  );
}

export function geminiRequest(body: wire.Json, chat: ChatRequest, images: Map<string, InlineImage>): wire.Json {
  refuseUnsupported(body);
  const all = body.messages as wire.Message[];
  const system = all.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => wire.textOf(m.content));
  const request: wire.Json = { contents: contentsOf(all, images), generationConfig: generationConfig(body, chat) };
  if (system.length > 0) {
    request.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  }
  const declarations = functionDeclarations(body.tools);
  if (declarations.length > 0) {
    request.tools = [{ functionDeclarations: declarations }];
  }
  const toolConfig = functionCallingConfig(body.tool_choice, declarations);
  if (toolConfig) {
    request.toolConfig = { functionCallingConfig: toolConfig };
  }
  return request;
}

/** Parameters Gemini has no equivalent for. */
function refuseUnsupported(body: wire.Json): void {
  const refuse = (param: string, why: string) => {
    throw ApiError.invalid(`${param} is not supported by this model's provider (Gemini): ${why}.`, param);
  };
  if (body.logprobs === true) {
    refuse('logprobs', 'it does not return log probabilities in our format');
  }
  if (body.top_logprobs !== undefined && body.top_logprobs !== null) {
    refuse('top_logprobs', 'it does not return log probabilities in our format');
  }
  if (isRecord(body.logit_bias) && Object.keys(body.logit_bias).length > 0) {
    refuse('logit_bias', 'it cannot bias tokens');
  }
  if (body.audio !== undefined && body.audio !== null) {
    refuse('audio', 'it does not answer with audio');
  }
  if (Array.isArray(body.modalities) && body.modalities.some((modality) => modality !== 'text')) {
    refuse('modalities', 'it answers with text only');
  }
  if (body.prediction !== undefined && body.prediction !== null) {
    refuse('prediction', 'it has no predicted outputs');
  }
  if (body.web_search_options !== undefined && body.web_search_options !== null) {
    refuse('web_search_options', 'the gateway does not offer its search');
  }
  if (body.parallel_tool_calls === false) {
    refuse('parallel_tool_calls', 'it cannot be held to one tool call per turn');
  }
  if (body.functions !== undefined || body.function_call !== undefined) {
    refuse(body.functions !== undefined ? 'functions' : 'function_call', 'use tools and tool_choice');
  }
}

function generationConfig(body: wire.Json, chat: ChatRequest): wire.Json {
  const config: wire.Json = { candidateCount: chat.n };
  if (chat.maxTokens !== null) {
    config.maxOutputTokens = chat.maxTokens;
  }
  const fields: [string, string][] = [
    ['temperature', 'temperature'],
    ['top_p', 'topP'],
    ['presence_penalty', 'presencePenalty'],
    ['frequency_penalty', 'frequencyPenalty'],
    ['seed', 'seed'],
  ];
  for (const [ours, theirs] of fields) {
    if (typeof body[ours] === 'number') {
      config[theirs] = body[ours];
    }
  }
  const stop = wire.stopSequences(body.stop);
  if (stop) {
    config.stopSequences = stop;
  }
  Object.assign(config, responseFormat(body.response_format));
  const effort = body.reasoning_effort;
  if (effort !== undefined && effort !== null) {
    if (typeof effort !== 'string' || !(effort in THINKING_BUDGETS)) {
      const offered = Object.keys(THINKING_BUDGETS).join(', ');
      throw ApiError.invalid(`reasoning_effort must be one of: ${offered}.`, 'reasoning_effort');
    }
    // The thoughts are billed (thoughtsTokenCount) but never shown: they are not asked for.
    config.thinkingConfig = { thinkingBudget: THINKING_BUDGETS[effort], includeThoughts: false };
  }
  return config;
}

/** json_object: JSON mode; json_schema: Gemini's structured output with the schema as given. */
function responseFormat(format: unknown): wire.Json {
  if (format === undefined || format === null) {
    return {};
  }
  const type = isRecord(format) ? format.type : undefined;
  if (type === 'text') {
    return {};
  }
  if (type === 'json_object') {
    return { responseMimeType: 'application/json' };
  }
  if (type === 'json_schema' && isRecord(format) && isRecord(format.json_schema)) {
    const schema = format.json_schema.schema;
    if (!isRecord(schema)) {
      throw ApiError.invalid('response_format.json_schema.schema must be a JSON schema object.', 'response_format');
    }
    return { responseMimeType: 'application/json', responseJsonSchema: schema };
  }
  throw ApiError.invalid("response_format.type must be 'text', 'json_object' or 'json_schema'.", 'response_format');
}

type Declaration = { name: string; description?: string; parameters?: wire.Json };

function functionDeclarations(tools: unknown): Declaration[] {
  if (tools === undefined || tools === null) {
    return [];
  }
  if (!Array.isArray(tools)) {
    throw ApiError.invalid('tools must be an array of function tools.', 'tools');
  }
  return tools.map((tool: unknown, i): Declaration => {
    const fn = isRecord(tool) && tool.type === 'function' && isRecord(tool.function) ? tool.function : null;
    if (!fn || typeof fn.name !== 'string' || fn.name === '') {
      throw ApiError.invalid(`tools[${i}] must be a function tool with a name (Gemini takes no other).`, `tools[${i}]`);
    }
    const declaration: Declaration = { name: fn.name };
    if (typeof fn.description === 'string') {
      declaration.description = fn.description;
    }
    const parameters = isRecord(fn.parameters) ? geminiSchema(fn.parameters, `tools[${i}].function.parameters`) : {};
    // Gemini refuses an object without properties: a function without arguments declares none.
    if (isRecord(parameters.properties) && Object.keys(parameters.properties).length > 0) {
      declaration.parameters = parameters;
    }
    return declaration;
  });
}

/** tool_choice: auto → AUTO, none → NONE, required → ANY, a named function → ANY with only that name. */
function functionCallingConfig(choice: unknown, declarations: Declaration[]): wire.Json | null {
  if (choice === undefined || choice === null) {
    return null;
  }
  if (typeof choice === 'string' && choice in TOOL_CHOICE_MODES) {
    if (choice === 'required' && declarations.length === 0) {
      throw ApiError.invalid("tool_choice 'required' needs tools.", 'tool_choice');
    }
    return declarations.length > 0 ? { mode: TOOL_CHOICE_MODES[choice] } : null;
  }
  const name =
    isRecord(choice) && choice.type === 'function' && isRecord(choice.function) ? choice.function.name : undefined;
  if (typeof name !== 'string') {
    throw ApiError.invalid(
      "tool_choice must be 'auto', 'none', 'required' or { type: 'function', function: { name } }.",
      'tool_choice',
    );
  }
  if (!declarations.some((declaration) => declaration.name === name)) {
    throw ApiError.invalid(`tool_choice names the function '${name}', which is not among tools.`, 'tool_choice');
  }
  return { mode: 'ANY', allowedFunctionNames: [name] };
}

/**
 * Gemini's turns: assistant → model; user → user; consecutive tool results → one user turn of
 * functionResponse parts, each named by the function its tool_call_id called.
 */
function contentsOf(all: wire.Message[], images: Map<string, InlineImage>): wire.Json[] {
  const callNames = new Map<string, string>();
  const contents: wire.Json[] = [];
  let results: wire.Json[] | null = null;
  all.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (message.role === 'system' || message.role === 'developer') {
      return;
    }
    if (message.role === 'tool' || message.role === 'function') {
      const part = functionResponse(message, at, callNames);
      if (results) {
        results.push(part);
      } else {
        results = [part];
        contents.push({ role: 'user', parts: results });
      }
      return;
    }
    results = null;
    const parts = contentParts(message.content, `${at}.content`, images);
    for (const call of wire.toolCallsOf(message, at)) {
      callNames.set(call.id, call.name);
      parts.push({ functionCall: { name: call.name, args: call.arguments } });
    }
    if (parts.length === 0) {
      throw ApiError.invalid(`${at}.content must not be empty for this model.`, `${at}.content`);
    }
    contents.push({ role: message.role === 'assistant' ? 'model' : 'user', parts });
  });
  return contents;
}

function functionResponse(message: wire.Message, at: string, callNames: Map<string, string>): wire.Json {
  const legacyName = message.role === 'function' ? wire.stringField(message.name) : '';
  const name = callNames.get(wire.stringField(message.tool_call_id)) ?? legacyName;
  if (!name) {
    throw ApiError.invalid(
      `${at}.tool_call_id does not match a tool call of an earlier assistant message.`,
      `${at}.tool_call_id`,
    );
  }
  return { functionResponse: { name, response: { content: wire.textOf(message.content) } } };
}

/** A message's content parts as Gemini parts; images by URL come from `images`, already fetched. */
function contentParts(content: unknown, at: string, images: Map<string, InlineImage>): wire.Json[] {
  if (typeof content === 'string') {
    return content === '' ? [] : [{ text: content }];
  }
  if (!Array.isArray(content)) {
    return [];
  }
  return content.map((part: unknown, j): wire.Json => {
    const partAt = `${at}[${j}]`;
    const value = isRecord(part) ? part : {};
    if (value.type === 'text' || value.type === 'refusal') {
      return { text: wire.stringField(value.type === 'text' ? value.text : value.refusal) };
    }
    if (value.type === 'image_url' && isRecord(value.image_url) && typeof value.image_url.url === 'string') {
      const url = value.image_url.url;
      const inline = wire.dataUri(url);
      const fetched = inline ? { mimeType: inline.mediaType, data: inline.data } : images.get(url);
      if (!fetched) {
        throw new Error(`image ${partAt} was not fetched`);
      }
      return { inlineData: fetched };
    }
    if (value.type === 'input_audio' && isRecord(value.input_audio)) {
      const audio = value.input_audio;
      return { inlineData: { mimeType: `audio/${wire.stringField(audio.format)}`, data: audio.data } };
    }
    if (value.type === 'file' && isRecord(value.file) && typeof value.file.file_data === 'string') {
      const inline = wire.dataUri(value.file.file_data);
      if (inline) {
        return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
      }
    }
    throw ApiError.invalid(
      `${partAt} cannot be sent to this model's provider (Gemini): files must be data URIs (file_id is not supported).`,
      partAt,
    );
  });
}
