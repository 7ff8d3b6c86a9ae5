import { ServerResponse } from 'node:http';

/**
 * The mock's embeddings, in OpenAI's (`POST /v1/embeddings`) and Gemini's (`:batchEmbedContents`)
 * dialects. Deterministic so tests can predict them: each vector is derived from a hash of its input,
 * its values are multiples of 1/1024 (exact in float32, so the float and base64 answers decode to the
 * same numbers), and an input costs one token per whitespace-separated word, or per token id.
 */
type Json = Record<string, unknown>;

/** Dimensions of a vector when the request names none. */
export const MOCK_EMBEDDING_DIMENSIONS = 8;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const words = (text: string) => text.match(/\S+/g)?.length ?? 0;

export type MockEmbeddingInput = string | number[];

/** The vector the mock answers for one input. */
export function mockEmbedding(input: MockEmbeddingInput, dimensions = MOCK_EMBEDDING_DIMENSIONS): number[] {
  let hash = 2166136261;
  for (const char of JSON.stringify(input)) {
    hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  }
  return Array.from({ length: dimensions }, (_, i) => {
    hash = Math.imul(hash ^ (i + 1), 16777619) >>> 0;
    return ((hash % 2049) - 1024) / 1024;
  });
}

/** The prompt tokens the mock reports for these inputs. */
export function countMockEmbeddingTokens(inputs: MockEmbeddingInput[]): number {
  return inputs.reduce((sum, input) => sum + (typeof input === 'string' ? words(input) : input.length), 0);
}

/** Little-endian float32 bytes in base64, as OpenAI answers `encoding_format: base64`. */
export function float32Base64(values: number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

/** OpenAI's `input`, as a list of inputs: a string, strings, a token array or token arrays. */
function inputsOf(input: unknown): MockEmbeddingInput[] | null {
  if (typeof input === 'string') {
    return [input];
  }
  if (!Array.isArray(input) || input.length === 0) {
    return null;
  }
  if (input.every((item) => typeof item === 'number')) {
    return [input];
  }
  const valid = input.every(
    (item) => typeof item === 'string' || (Array.isArray(item) && item.every((id) => typeof id === 'number')),
  );
  return valid ? input : null;
}

function send(res: ServerResponse, status: number, body: Json): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function invalid(res: ServerResponse, message: string, param: string): void {
  send(res, 400, { error: { message, type: 'invalid_request_error', param, code: null } });
}

/** `POST /v1/embeddings`; `omitUsage` leaves `usage` out, as some compatible servers do. */
export function respondOpenAiEmbeddings(res: ServerResponse, body: Json, omitUsage: boolean): void {
  const inputs = inputsOf(body.input);
  if (!inputs) {
    invalid(res, "'input' must be a string, strings, a token array or token arrays.", 'input');
    return;
  }
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : MOCK_EMBEDDING_DIMENSIONS;
  const base64 = body.encoding_format === 'base64';
  const data = inputs.map((input, index) => {
    const vector = mockEmbedding(input, dimensions);
    return { object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector };
  });
  const tokens = countMockEmbeddingTokens(inputs);
  const usage = { prompt_tokens: tokens, total_tokens: tokens };
  send(res, 200, { object: 'list', data, model: body.model, ...(omitUsage ? {} : { usage }) });
}

/** Gemini's `models/{model}:batchEmbedContents`: floats only, and no usage, as Gemini answers. */
export function respondGeminiEmbeddings(res: ServerResponse, body: Json): void {
  const requests = Array.isArray(body.requests) ? (body.requests as unknown[]) : null;
  if (!requests || requests.length === 0) {
    invalid(res, 'requests must be a non-empty array.', 'requests');
    return;
  }
  const embeddings = requests.map((request) => {
    const content = isRecord(request) && isRecord(request.content) ? request.content : {};
    const parts = Array.isArray(content.parts) ? (content.parts as unknown[]) : [];
    const text = parts.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
    const dimensions =
      isRecord(request) && typeof request.outputDimensionality === 'number'
        ? request.outputDimensionality
        : MOCK_EMBEDDING_DIMENSIONS;
    return { values: mockEmbedding(text, dimensions) };
  });
  send(res, 200, { embeddings });
}
