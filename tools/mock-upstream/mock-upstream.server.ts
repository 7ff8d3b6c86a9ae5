import { respondAnthropicCount } from 'tools/mock-upstream/mock-anthropic-count';
import { dialectAuthorized, matchDialect, respondInDialect } from 'tools/mock-upstream/provider-dialects';
import { respondOpenAiEmbeddings } from 'tools/mock-upstream/mock-embeddings';
import { MockUsageDetails, mockUsageDetailsIn } from 'tools/mock-upstream/mock-usage-details';
import {
  countMockTextPromptTokens,
  mockPrompts,
  TextCompletion,
  textCompletionEvents,
  textCompletionJson,
  validTextPrompt,
} from 'tools/mock-upstream/mock-text-completions';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export interface MockUpstreamOptions {
  port?: number;
  host?: string;
  latencyMs?: number;
  chunkDelayMs?: number;
  /**
   * How many of the last requests to keep in `requests` (default 1000). The bench keeps none: a thousand
   * megabyte prompts held for inspection would make the mock measure its own garbage collector.
   */
  recordRequests?: number;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  body: unknown;
}

export interface MockUpstream {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /**
   * Names of the `/flaky/<name>/v1` channels that fail now (503): a test flips an upstream between
   * failing and healthy without changing the gateway's configuration.
   */
  failing: Set<string>;
  /** Headers added to every error answer, e.g. `retry-after`. */
  errorHeaders: Record<string, string>;
  close(): Promise<void>;
}

interface ServerState {
  failing: Set<string>;
  errorHeaders: Record<string, string>;
  latencyMs: number;
  chunkDelayMs: number;
  requests: ReceivedRequest[];
  recordRequests: number;
  sequence: number;
  /** How many provider request ids were handed out. */
  providerRequests: number;
}

interface MockControl {
  status?: number;
  latencyMs: number;
  chunkDelayMs: number;
  breakAfter?: number;
  /** Send this many content events (stream) or the start of the body (JSON), then stay silent without closing. */
  stallAfter?: number;
  garbage: boolean;
  omitUsage: boolean;
  reply: string;
  /** The reply's pieces this many times over: long answers without a long request. */
  repeat: number;
  errorMessage?: string;
  errorCode?: string;
  /** An event (stream) or a body (JSON) of about this many bytes: an oversized answer. */
  oversizeBytes?: number;
  /** How many normal events come before the oversized one. */
  oversizeAfter: number;
  /** Completion tokens billed beyond the reply, as OpenAI bills a prediction's rejected tokens. */
  rejectedPredictionTokens: number;
}

interface Completion {
  id: string;
  created: number;
  model: string;
  /** The reply's pieces, or the tool call's argument pieces: one completion token each. */
  pieces: string[];
  /** Set when the request made a tool call mandatory: the answer calls it instead of replying. */
  toolCall: { id: string; name: string } | null;
  finishReason: 'stop' | 'length' | 'tool_calls';
  n: number;
  promptTokens: number;
  rejectedPredictionTokens: number;
  /** Cached prompt tokens and reasoning tokens on top (OpenAI has no cache-write count). */
  details: MockUsageDetails | null;
}

type Route =
  | 'chat'
  | 'completions'
  | 'embeddings'
  | 'models'
  | 'hang'
  | 'stall'
  | 'garbage'
  | 'not_found'
  | { status: number; code?: string };
type Json = Record<string, unknown>;

const DEFAULT_REPLY = 'Hello from the mock upstream.';
const DEFAULT_RECORDED_REQUESTS = 1000;
// Per-channel behaviour by base URL: /status/500/v1, /hang/v1, /fail/400/insufficient_quota/v1 (an error
// with that code), /oversize/2000000/v1 (the first event, or the JSON body, of that size), /stall/v1 (the
// headers, then silence), /garbage/v1 (a 200 that is not an answer), /flaky/<name>/v1 (503 while
// `failing` holds the name, else normal).
const ROUTE_PATTERN =
  /^(?:\/status\/(\d+)|\/(hang|stall|garbage)|\/fail\/(\d+)\/(\w+)|\/oversize\/\d+|\/flaky\/([\w-]+))?(\/v1\/[^?]*)/;
const OVERSIZE_PATTERN = /^\/oversize\/(\d+)\//;
const ERROR_CODES: Record<number, string> = { 401: 'invalid_api_key', 404: 'not_found', 429: 'rate_limit_exceeded' };
const MODELS_BODY = JSON.stringify({
  object: 'list',
  data: [{ id: 'mock-gpt', object: 'model', created: 1700000000, owned_by: 'mock' }],
});

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonNegativeInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function isErrorStatus(status: number | undefined): status is number {
  return status !== undefined && status >= 400 && status <= 599;
}

function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

function countPartTokens(part: unknown): number {
  if (isRecord(part) && part.type === 'image_url') {
    return 85;
  }
  return isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? countWords(part.text) : 0;
}

/**
 * Deliberately crude so tests can predict it: per message 3 + whitespace-separated words of its text (string
 * content, or the `text` of text parts) + 85 per image part; plus 3 for the whole prompt.
 */
export function countMockPromptTokens(messages: unknown): number {
  let total = 3;
  for (const message of Array.isArray(messages) ? (messages as unknown[]) : []) {
    const content = isRecord(message) ? message.content : undefined;
    total += 3;
    if (typeof content === 'string') {
      total += countWords(content);
    } else if (Array.isArray(content)) {
      total += content.reduce((sum: number, part) => sum + countPartTokens(part), 0);
    }
  }
  return total;
}

function matchRoute(method: string, url: string, failing: Set<string>): Route {
  const match = ROUTE_PATTERN.exec(url);
  if (!match) {
    return 'not_found';
  }
  const [, status, special, failStatus, failCode, flaky, path] = match;
  if (flaky !== undefined && failing.has(flaky)) {
    return { status: 503 };
  }
  if (status !== undefined) {
    return isErrorStatus(Number(status)) ? { status: Number(status) } : 'not_found';
  }
  if (failStatus !== undefined) {
    return isErrorStatus(Number(failStatus)) ? { status: Number(failStatus), code: failCode } : 'not_found';
  }
  if (special === 'hang') {
    return 'hang';
  }
  if (method === 'POST' && path === '/v1/chat/completions') {
    if (special === 'stall' || special === 'garbage') {
      return special;
    }
    return 'chat';
  }
  if (method === 'POST' && path === '/v1/embeddings') {
    return 'embeddings';
  }
  if (method === 'POST' && path === '/v1/completions') {
    return 'completions';
  }
  return method === 'GET' && path === '/v1/models' ? 'models' : 'not_found';
}

function parseJson(raw: string): { ok: boolean; value: unknown } {
  if (raw === '') {
    return { ok: true, value: undefined };
  }
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false, value: undefined };
  }
}

function readControl(body: unknown, state: ServerState): MockControl {
  const mock: Json = isRecord(body) && isRecord(body.mock) ? body.mock : {};
  const status = nonNegativeInt(mock.status);
  return {
    status: isErrorStatus(status) ? status : undefined,
    latencyMs: nonNegativeInt(mock.latency_ms) ?? state.latencyMs,
    chunkDelayMs: nonNegativeInt(mock.chunk_delay_ms) ?? state.chunkDelayMs,
    breakAfter: nonNegativeInt(mock.break_after),
    stallAfter: nonNegativeInt(mock.stall_after),
    garbage: mock.garbage === true,
    omitUsage: mock.omit_usage === true,
    reply: typeof mock.reply === 'string' ? mock.reply : DEFAULT_REPLY,
    repeat: Math.max(1, nonNegativeInt(mock.repeat) ?? 1),
    errorMessage: typeof mock.error_message === 'string' ? mock.error_message : undefined,
    errorCode: typeof mock.error_code === 'string' ? mock.error_code : undefined,
    oversizeBytes: nonNegativeInt(mock.oversize_bytes),
    oversizeAfter: nonNegativeInt(mock.oversize_after) ?? 0,
    rejectedPredictionTokens: nonNegativeInt(mock.rejected_prediction_tokens) ?? 0,
  };
}

/**
 * A value that fits a JSON schema, always the same: strings are 'mock' (or the first enum value), numbers
 * 1, booleans true, arrays empty, objects every listed property. What the mock answers as a tool call's
 * arguments and as JSON output, so clients that check answers against the schema accept them.
 */
export function mockValueFor(schema: unknown): unknown {
  if (!isRecord(schema)) {
    return null;
  }
  const enumValues: unknown[] = Array.isArray(schema.enum) ? schema.enum : [];
  if (enumValues.length > 0) {
    return enumValues[0];
  }
  const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types[0];
  switch (type) {
    case 'object': {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      return Object.fromEntries(Object.entries(properties).map(([name, value]) => [name, mockValueFor(value)]));
    }
    case 'string':
      return 'mock';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    default:
      return null;
  }
}

/** Tool-call arguments are streamed in pieces of this many characters, one completion token each. */
export const MOCK_ARGUMENT_PIECE_CHARS = 8;

/** The pieces of a JSON text as the mock streams tool-call arguments. */
export function mockArgumentPieces(json: string): string[] {
  return json.match(new RegExp(`[\\s\\S]{1,${MOCK_ARGUMENT_PIECE_CHARS}}`, 'g')) ?? [];
}

/** The function the request forces (`tool_choice` 'required' or a named function), with its parameters. */
function forcedTool(body: Json): { name: string; parameters: unknown } | null {
  const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  const functions = tools.flatMap((tool) => (isRecord(tool) && isRecord(tool.function) ? [tool.function] : []));
  const choice = body.tool_choice;
  const named = isRecord(choice) && isRecord(choice.function) ? choice.function.name : undefined;
  const chosen =
    named !== undefined ? functions.find((fn) => fn.name === named) : choice === 'required' ? functions[0] : undefined;
  return chosen && typeof chosen.name === 'string' ? { name: chosen.name, parameters: chosen.parameters } : null;
}

/** The reply text: JSON fitting the requested schema (or a JSON object) when response_format asks for it. */
function replyText(body: Json, control: MockControl): string {
  const format = isRecord(body.response_format) ? body.response_format : {};
  if (format.type === 'json_schema' && isRecord(format.json_schema)) {
    return JSON.stringify(mockValueFor(format.json_schema.schema));
  }
  return format.type === 'json_object' ? JSON.stringify({ reply: control.reply }) : control.reply;
}

function buildCompletion(state: ServerState, body: Json, control: MockControl, rawBody: string): Completion {
  const tool = forcedTool(body);
  const once = tool
    ? mockArgumentPieces(JSON.stringify(mockValueFor(tool.parameters)))
    : (replyText(body, control).match(/\s*\S+\s*/g) ?? []);
  const pieces = control.repeat === 1 ? once : Array.from({ length: control.repeat }, () => once).flat();
  const limit = nonNegativeInt(body.max_completion_tokens) ?? nonNegativeInt(body.max_tokens);
  const truncated = limit !== undefined && pieces.length > limit;
  const sequence = ++state.sequence;
  return {
    id: `chatcmpl-mock-${sequence}`,
    created: Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : 'mock-gpt',
    pieces: truncated ? pieces.slice(0, limit) : pieces,
    toolCall: tool ? { id: `call_mock_${sequence}`, name: tool.name } : null,
    finishReason: truncated ? 'length' : tool ? 'tool_calls' : 'stop',
    n: Math.max(1, nonNegativeInt(body.n) ?? 1),
    promptTokens: countMockPromptTokens(body.messages),
    rejectedPredictionTokens: control.rejectedPredictionTokens,
    details: mockUsageDetailsIn(rawBody),
  };
}

function envelope(c: Completion, object: string): Json {
  return { id: c.id, object, created: c.created, model: c.model, system_fingerprint: 'fp_mock' };
}

function usageOf(c: Completion): Json {
  const cached = c.details?.cached ?? 0;
  const reasoning = c.details?.reasoning ?? 0;
  const promptTokens = c.promptTokens + cached;
  const completionTokens = c.pieces.length * c.n + c.rejectedPredictionTokens + reasoning;
  const completionDetails: Json = {
    ...(c.rejectedPredictionTokens > 0 ? { rejected_prediction_tokens: c.rejectedPredictionTokens } : {}),
    ...(c.details ? { reasoning_tokens: reasoning } : {}),
  };
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(c.details ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
    ...(Object.keys(completionDetails).length > 0 ? { completion_tokens_details: completionDetails } : {}),
  };
}

function connectionHeader(res: ServerResponse): string {
  return res.req.headers.connection?.toLowerCase() === 'close' ? 'close' : 'keep-alive';
}

function sendJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  const length = Buffer.byteLength(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': length,
    connection: connectionHeader(res),
  });
  res.end(body);
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  code?: string,
  headers: Record<string, string> = {},
): void {
  const type = status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';
  const error = { message, type, param: null, code: code ?? ERROR_CODES[status] ?? null };
  sendJson(res, status, JSON.stringify({ error }), headers);
}

function sendCompletion(res: ServerResponse, c: Completion, control: MockControl): void {
  if (control.stallAfter !== undefined) {
    res.writeHead(200, { 'content-type': 'application/json', connection: connectionHeader(res) });
    res.write(`{"id":"${c.id}","object":"chat.completion",`);
    return;
  }
  if (control.garbage) {
    sendJson(res, 200, '<html>not json</html>');
    return;
  }
  const content = control.oversizeBytes === undefined ? c.pieces.join('') : 'x'.repeat(control.oversizeBytes);
  const message = c.toolCall
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: c.toolCall.id, type: 'function', function: { name: c.toolCall.name, arguments: content } }],
      }
    : { role: 'assistant', content };
  const choices = Array.from({ length: c.n }, (_, index) => ({
    index,
    message,
    logprobs: null,
    finish_reason: c.finishReason,
  }));
  const head = envelope(c, 'chat.completion');
  sendJson(res, 200, JSON.stringify({ ...head, choices, ...(control.omitUsage ? {} : { usage: usageOf(c) }) }));
}

// Returns the SSE events to write and whether the socket must then be destroyed instead of ended.
function buildStreamEvents(c: Completion, breakAfter: number | undefined, withUsage: boolean) {
  const head = envelope(c, 'chat.completion.chunk');
  const choiceEvent = (index: number, delta: Json, finish: string | null) => {
    const choices = [{ index, delta, logprobs: null, finish_reason: finish }];
    return `data: ${JSON.stringify({ ...head, choices, ...(withUsage ? { usage: null } : {}) })}\n\n`;
  };
  const events: string[] = [];
  let delivered = 0;
  const breakNow = () => breakAfter !== undefined && delivered >= breakAfter;
  const call = c.toolCall;
  const first = call
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }
    : { role: 'assistant', content: '' };
  const deltaOf = (piece: string) =>
    call ? { tool_calls: [{ index: 0, function: { arguments: piece } }] } : { content: piece };
  for (let index = 0; index < c.n; index++) {
    events.push(choiceEvent(index, first, null));
    if (breakNow()) {
      return { events, broken: true };
    }
    for (const piece of c.pieces) {
      events.push(choiceEvent(index, deltaOf(piece), null));
      delivered++;
      if (breakNow()) {
        return { events, broken: true };
      }
    }
    // A break_after beyond the reply length still breaks: the stream never completes normally.
    if (breakAfter !== undefined && index === c.n - 1) {
      return { events, broken: true };
    }
    events.push(choiceEvent(index, {}, c.finishReason));
  }
  if (withUsage) {
    events.push(`data: ${JSON.stringify({ ...head, choices: [], usage: usageOf(c) })}\n\n`);
  }
  events.push('data: [DONE]\n\n');
  return { events, broken: false };
}

function writeEvents(res: ServerResponse, events: string[], delayMs: number, broken: boolean): void {
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  res.once('close', () => clearTimeout(timer));
  const step = (): void => {
    while (next < events.length && !res.destroyed) {
      const event = events[next++];
      if (broken && next === events.length) {
        // Destroying only once the write is flushed; http corks the socket, so an immediate destroy would drop it.
        res.write(event, () => res.destroy());
        return;
      }
      res.write(event);
      if (delayMs > 0 && next < events.length) {
        timer = setTimeout(step, delayMs);
        return;
      }
    }
    if (!res.destroyed) {
      res.end();
    }
  };
  step();
}

function streamCompletion(res: ServerResponse, c: Completion, control: MockControl, includeUsage: boolean): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: connectionHeader(res),
  });
  if (control.garbage) {
    writeEvents(res, ['data: {not json\n\n'], 0, false);
    return;
  }
  const { events, broken } = buildStreamEvents(c, control.breakAfter, includeUsage && !control.omitUsage);
  if (control.stallAfter !== undefined) {
    // The role event and stallAfter content events, then silence on an open connection.
    for (const event of events.slice(0, control.stallAfter + 1)) {
      res.write(event);
    }
    return;
  }
  if (control.oversizeBytes !== undefined) {
    const chunk = { ...envelope(c, 'chat.completion.chunk'), choices: [{ index: 0, delta: { content: '' } }] };
    const event = `data: ${JSON.stringify(chunk)}\n\n`;
    const padded = event.replace('"content":""', `"content":"${'x'.repeat(control.oversizeBytes)}"`);
    events.splice(Math.min(control.oversizeAfter, events.length), 0, padded);
  }
  writeEvents(res, events, control.chunkDelayMs, broken);
}

function buildTextCompletion(state: ServerState, body: Json, control: MockControl): TextCompletion {
  // The usage-details marker is a chat feature: a text completion reports plain usage.
  const c = buildCompletion(state, body, control, '');
  return {
    id: c.id.replace('chatcmpl', 'cmpl'),
    created: c.created,
    model: c.model,
    pieces: c.pieces,
    finishReason: c.finishReason === 'length' ? 'length' : 'stop',
    n: c.n,
    prompts: mockPrompts(body.prompt).length,
    promptTokens: countMockTextPromptTokens(body),
  };
}

/** The legacy `POST /v1/completions`: JSON, or SSE with usage when asked, breakable like chat streams. */
function respondTextCompletion(state: ServerState, res: ServerResponse, body: Json, control: MockControl): void {
  if (!validTextPrompt(body)) {
    sendError(res, 400, "'prompt' must be a string, strings, a token array or token arrays.");
    return;
  }
  const c = buildTextCompletion(state, body, control);
  if (body.stream !== true) {
    sendJson(res, 200, control.garbage ? '<html>not json</html>' : textCompletionJson(c, control.omitUsage));
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: connectionHeader(res),
  });
  if (control.garbage) {
    writeEvents(res, ['data: {not json\n\n'], 0, false);
    return;
  }
  const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
  const { events, broken } = textCompletionEvents(c, control.breakAfter, includeUsage && !control.omitUsage);
  writeEvents(res, events, control.chunkDelayMs, broken);
}

function respond(
  state: ServerState,
  res: ServerResponse,
  route: Route,
  { body, rawBody }: { body: unknown; rawBody: string },
  control: MockControl,
): void {
  const status = typeof route === 'object' ? route.status : control.status;
  if (status !== undefined) {
    const code = typeof route === 'object' ? route.code : control.errorCode;
    const message = control.errorMessage ?? `mock error ${status}${code ? `: ${code}` : ''}`;
    sendError(res, status, message, code, state.errorHeaders);
  } else if (route === 'models') {
    sendJson(res, 200, MODELS_BODY);
  } else if (!isRecord(body)) {
    sendError(res, 400, 'The request body must be a JSON object.');
  } else if (route === 'embeddings') {
    respondOpenAiEmbeddings(res, body, control.omitUsage);
  } else if (route === 'completions') {
    respondTextCompletion(state, res, body, control);
  } else if (body.stream === true) {
    const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
    streamCompletion(res, buildCompletion(state, body, control, rawBody), control, includeUsage);
  } else {
    sendCompletion(res, buildCompletion(state, body, control, rawBody), control);
  }
}

function handleRequest(state: ServerState, req: IncomingMessage, res: ServerResponse, rawBody: string): void {
  const parsed = parseJson(rawBody);
  const method = req.method ?? '';
  const path = req.url ?? '';
  if (state.recordRequests > 0) {
    state.requests.push({ method, path, headers: req.headers, rawBody, body: parsed.value });
    if (state.requests.length > state.recordRequests) {
      state.requests.shift();
    }
  }
  const dialect = matchDialect(method, path);
  // Each provider's own request id, under its own header name (Gemini's API sends none), so a test can
  // find it on the bill; every answer carries it, errors too, as the providers' do.
  const idHeader = dialect === null ? 'x-request-id' : dialect.startsWith('anthropic') ? 'request-id' : null;
  if (idHeader) {
    res.setHeader(idHeader, `${dialect === null ? 'mockreq' : 'mockreq_ant'}_${++state.providerRequests}`);
  }
  if (dialect) {
    if (!dialectAuthorized(dialect, req.headers)) {
      sendError(res, 401, 'Missing API key header.');
    } else if (!isRecord(parsed.value)) {
      sendError(res, 400, 'The request body must be a JSON object.');
    } else if (dialect === 'anthropic-count') {
      respondAnthropicCount(res, req.headers, parsed.value);
    } else {
      const reply = { text: readControl(parsed.value, state).reply, details: mockUsageDetailsIn(rawBody) };
      respondInDialect(dialect, res, parsed.value, reply, ++state.sequence);
    }
    return;
  }
  if (!/^Bearer\s+\S/i.test(req.headers.authorization ?? '')) {
    sendError(res, 401, 'Missing or invalid bearer token.');
    return;
  }
  const route = matchRoute(method, path, state.failing);
  if (route === 'hang') {
    return;
  }
  if (route === 'not_found') {
    sendError(res, 404, `Unknown request URL: ${method} ${path}`);
    return;
  }
  if (!parsed.ok && typeof route !== 'object') {
    sendError(res, 400, 'We could not parse the JSON body of your request.');
    return;
  }
  const control = readControl(parsed.value, state);
  if (route === 'stall') {
    control.stallAfter ??= 0;
  } else if (route === 'garbage') {
    control.garbage = true;
  }
  const oversize = OVERSIZE_PATTERN.exec(path);
  if (oversize) {
    control.oversizeBytes = Number(oversize[1]);
  }
  const request = { body: parsed.value, rawBody };
  if (control.latencyMs === 0) {
    respond(state, res, route, request, control);
    return;
  }
  const timer = setTimeout(() => respond(state, res, route, request, control), control.latencyMs);
  res.once('close', () => clearTimeout(timer));
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

export function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const host = options.host ?? '127.0.0.1';
  const state: ServerState = {
    failing: new Set(),
    errorHeaders: {},
    latencyMs: options.latencyMs ?? 0,
    chunkDelayMs: options.chunkDelayMs ?? 0,
    requests: [],
    recordRequests: options.recordRequests ?? DEFAULT_RECORDED_REQUESTS,
    sequence: 0,
    providerRequests: 0,
  };
  const server = createServer((req, res) => {
    let rawBody = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (rawBody += chunk));
    req.on('end', () => handleRequest(state, req, res, rawBody));
    req.on('error', () => res.destroy());
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      const urlHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${urlHost}:${port}`,
        port,
        requests: state.requests,
        failing: state.failing,
        get errorHeaders() {
          return state.errorHeaders;
        },
        set errorHeaders(headers: Record<string, string>) {
          state.errorHeaders = headers;
        },
        close: () => closeServer(server),
      });
    });
  });
}
