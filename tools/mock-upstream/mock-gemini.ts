import { ServerResponse } from 'node:http';
import { DialectReply, isRecord, MockReply, replyFor, textOfParts } from 'tools/mock-upstream/provider-dialects';

/**
 * The mock's Gemini generateContent / streamGenerateContent dialect. Deterministic and observable:
 * - `toolConfig.functionCallingConfig.mode` ANY: the answer calls every allowed function (all declared
 *   ones, or `allowedFunctionNames`) at once, with arguments made from its parameters' schema;
 * - after function results (the last turn is functionResponse parts) the reply names what it got;
 * - inline images in the last turn: the reply names their count, media types and bytes;
 * - `responseMimeType` application/json: the reply is JSON (matching `responseJsonSchema` if given);
 * - a thinking budget above 0: each candidate starts with a thought part (`thought: true`), counted in
 *   `thoughtsTokenCount`;
 * - `candidateCount` candidates, streamed side by side, each with its `index`.
 */
type Json = Record<string, unknown>;
type Call = { name: string; args: Json };

const THOUGHT = 'Let me think this through first.';

export function respondGemini(res: ServerResponse, body: Json, reply: MockReply, sequence: number, stream: boolean) {
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  const contents = Array.isArray(body.contents) ? (body.contents as unknown[]) : [];
  const instruction = isRecord(body.systemInstruction) ? textOfParts(body.systemInstruction.parts) : '';
  const maxTokens = typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : undefined;
  const calls = functionCalls(body);
  const text = calls.length > 0 ? '' : replyText(contents, config, reply.text);
  const result = replyFor({ ...reply, text }, maxTokens, contents, instruction);
  const thinking = isRecord(config.thinkingConfig) && Number(config.thinkingConfig.thinkingBudget) > 0;
  const answer: Answer = {
    result,
    calls,
    thought: thinking ? THOUGHT : '',
    n: typeof config.candidateCount === 'number' ? config.candidateCount : 1,
    sequence,
  };
  return stream ? geminiStream(res, answer) : geminiContent(res, answer);
}

interface Answer {
  result: DialectReply;
  calls: Call[];
  thought: string;
  n: number;
  sequence: number;
}

/** Tokens of the thought: one per word piece, like the reply's. */
const thoughtTokens = (a: Answer) => (a.thought.match(/\s*\S+\s*/g) ?? []).length;

function functionCalls(body: Json): Call[] {
  const config = isRecord(body.toolConfig) ? body.toolConfig.functionCallingConfig : undefined;
  if (!isRecord(config) || config.mode !== 'ANY') {
    return [];
  }
  const declared = (Array.isArray(body.tools) ? (body.tools as unknown[]) : []).flatMap((tool) =>
    isRecord(tool) && Array.isArray(tool.functionDeclarations) ? (tool.functionDeclarations as unknown[]) : [],
  );
  const allowed = Array.isArray(config.allowedFunctionNames) ? (config.allowedFunctionNames as unknown[]) : null;
  return declared.flatMap((declaration): Call[] => {
    if (!isRecord(declaration) || typeof declaration.name !== 'string') {
      return [];
    }
    if (allowed && !allowed.includes(declaration.name)) {
      return [];
    }
    const args = isRecord(declaration.parameters) ? valueOf(declaration.parameters) : {};
    return [{ name: declaration.name, args: isRecord(args) ? args : {} }];
  });
}

/** A value that fits a schema: the first enum value, "mock", 1, true, or objects and arrays of those. */
function valueOf(schema: Json, depth = 0): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[0];
  }
  const declared = typeof schema.type === 'string' ? schema.type : undefined;
  const type = (declared ?? (isRecord(schema.properties) ? 'object' : 'string')).toLowerCase();
  if (type === 'object' && depth < 8) {
    const properties = isRecord(schema.properties) ? schema.properties : {};
    return Object.fromEntries(
      Object.entries(properties).map(([name, child]) => [name, valueOf(isRecord(child) ? child : {}, depth + 1)]),
    );
  }
  if (type === 'array' && depth < 8) {
    return [valueOf(isRecord(schema.items) ? schema.items : {}, depth + 1)];
  }
  return { integer: 1, number: 1, boolean: true, string: 'mock' }[type] ?? null;
}

function replyText(contents: unknown[], config: Json, text: string): string {
  const last = contents.at(-1);
  const parts = isRecord(last) && Array.isArray(last.parts) ? (last.parts as unknown[]).filter(isRecord) : [];
  const results = parts.flatMap((part) => (isRecord(part.functionResponse) ? [part.functionResponse] : []));
  const images = parts.flatMap((part) => (isRecord(part.inlineData) ? [part.inlineData] : []));
  let said = text;
  if (results.length > 0) {
    said = `Results: ${results.map((r) => `${String(r.name)} ${JSON.stringify(r.response)}`).join('; ')}`;
  } else if (images.length > 0) {
    const described = images.map((image) => `${String(image.mimeType)} ${base64Bytes(image.data)} bytes`);
    said = `I see ${images.length} image(s): ${described.join(', ')}`;
  }
  if (config.responseMimeType === 'application/json') {
    const schema = isRecord(config.responseJsonSchema) ? config.responseJsonSchema : null;
    return JSON.stringify(schema ? valueOf(schema) : { reply: said });
  }
  return said;
}

const base64Bytes = (data: unknown) => (typeof data === 'string' ? Buffer.from(data, 'base64').length : 0);

function usage(a: Answer): Json {
  const { result } = a;
  const prompt = result.promptTokens + result.details.cached;
  const candidates = (result.pieces.length + a.calls.length) * a.n;
  const thoughts = result.details.reasoning + thoughtTokens(a) * a.n;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates + thoughts,
    ...(result.details.cached > 0 ? { cachedContentTokenCount: result.details.cached } : {}),
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
  };
}

const finishOf = (a: Answer) => (a.result.truncated ? 'MAX_TOKENS' : 'STOP');

function candidate(index: number, parts: Json[], finish: string | null): Json {
  return { content: { role: 'model', parts }, index, ...(finish ? { finishReason: finish } : {}) };
}

function geminiContent(res: ServerResponse, a: Answer): void {
  const parts: Json[] = [
    ...(a.thought ? [{ text: a.thought, thought: true }] : []),
    ...(a.calls.length > 0 ? a.calls.map((call) => ({ functionCall: call })) : [{ text: a.result.pieces.join('') }]),
  ];
  const answer = {
    candidates: Array.from({ length: a.n }, (_, index) => candidate(index, parts, finishOf(a))),
    usageMetadata: usage(a),
    responseId: `mock-${a.sequence}`,
  };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
}

/** Each event: the next piece of every candidate (a thought first, then the reply's pieces or one call each). */
function geminiStream(res: ServerResponse, a: Answer): void {
  const steps: Json[][] = [
    ...(a.thought ? [[{ text: a.thought, thought: true }]] : []),
    ...(a.calls.length > 0
      ? a.calls.map((call) => [{ functionCall: call }])
      : a.result.pieces.map((piece) => [{ text: piece }])),
  ];
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  steps.forEach((parts, i) => {
    const last = i === steps.length - 1;
    const chunk: Json = {
      candidates: Array.from({ length: a.n }, (_, index) => candidate(index, parts, last ? finishOf(a) : null)),
      responseId: `mock-${a.sequence}`,
    };
    if (last) {
      chunk.usageMetadata = usage(a);
    }
    res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  });
  res.end();
}
