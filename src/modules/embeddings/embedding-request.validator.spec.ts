import { ApiError } from 'src/common/errors/api-error';
import { ChannelType } from 'src/modules/channels/channel.entity';
import { validateEmbeddingRequest } from 'src/modules/embeddings/embedding-request.validator';
import { CatalogModel, CatalogRoute } from 'src/modules/models/catalog.service';

const route = (type: ChannelType): CatalogRoute => ({
  upstreamModel: `${type}-embed`,
  channel: {
    id: type,
    type,
    baseUrl: 'http://127.0.0.1:1/v1',
    apiKey: 'k',
    priority: 0,
    weight: 1,
    timeouts: { connectMs: 1000, firstByteMs: 1000, streamFirstByteMs: 1000, silenceMs: 1000 },
    autoDisableAfterHours: null,
  },
});
const embedder: CatalogModel = {
  id: 'embed',
  inputPrice: 20n,
  outputPrice: 0n,
  maxOutputTokens: 1,
  vision: false,
  kind: 'embedding',
  rpm: 60,
  tpm: 1000,
  created: 0,
  ownedBy: 'openai',
  routes: [route('openai'), route('gemini'), route('anthropic')],
};
const models: CatalogModel[] = [
  embedder,
  { ...embedder, id: 'chat', kind: 'chat' },
  { ...embedder, id: 'claude-only', routes: [route('anthropic')] },
  { ...embedder, id: 'gemini-only', routes: [route('gemini')] },
];
const find = (id: string) => models.find((model) => model.id === id);
const valid = { model: 'embed', input: 'Hello there' };

function rejection(body: unknown): { message: string; param: string | null } {
  try {
    validateEmbeddingRequest(body, find);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return { message: (error as ApiError).message, param: (error as ApiError).param };
  }
  throw new Error('expected a rejection');
}

describe(validateEmbeddingRequest.name, () => {
  it('should accept the four input shapes, as a list of inputs', () => {
    const inputsOf = (input: unknown) => validateEmbeddingRequest({ ...valid, input }, find).embedding.inputs;

    expect(inputsOf('one')).toEqual(['one']);
    expect(inputsOf(['one', 'two'])).toEqual(['one', 'two']);
    expect(inputsOf([1, 2, 3])).toEqual([[1, 2, 3]]);
    expect(inputsOf([[1], [2, 3]])).toEqual([[1], [2, 3]]);
  });

  it('should hold input tokens only, and read the defaults', () => {
    const admitted = validateEmbeddingRequest({ ...valid, input: [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]] }, find);

    expect(admitted.held).toEqual({ promptTokens: 12, completionTokens: 0 });
    expect(admitted.embedding).toMatchObject({ encodingFormat: 'float', dimensions: null });
    expect(admitted.model).toBe(embedder);
  });

  it('should refuse malformed inputs with a 400 naming input', () => {
    for (const input of [
      undefined,
      '',
      [],
      [''],
      ['ok', 2],
      [[1], 'two'],
      [[]],
      [1.5],
      [-1],
      [{ text: 'x' }],
      Array.from({ length: 2049 }, () => 'x'),
      Array.from({ length: 8193 }, () => 1),
      7,
    ]) {
      expect(rejection({ ...valid, input }).param).toBe('input');
    }
  });

  it('should refuse a request estimated above 300k tokens', () => {
    const input = Array.from({ length: 40 }, () => Array.from({ length: 8000 }, (_, i) => i));

    expect(rejection({ ...valid, input })).toMatchObject({ param: 'input', message: expect.stringMatching(/300000/) });
  });

  it('should check encoding_format, dimensions and user', () => {
    expect(rejection({ ...valid, encoding_format: 'int8' }).param).toBe('encoding_format');
    expect(rejection({ ...valid, dimensions: 0 }).param).toBe('dimensions');
    expect(rejection({ ...valid, dimensions: 1.5 }).param).toBe('dimensions');
    expect(rejection({ ...valid, user: 'u'.repeat(513) }).param).toBe('user');
    const read = validateEmbeddingRequest({ ...valid, encoding_format: 'base64', dimensions: 256, user: 'u' }, find);
    expect(read.embedding).toMatchObject({ encodingFormat: 'base64', dimensions: 256 });
  });

  it('should refuse a missing, unknown or chat model with a 400 naming model', () => {
    expect(rejection({ input: 'x' }).param).toBe('model');
    expect(rejection({ ...valid, model: 'nope' }).param).toBe('model');
    expect(rejection({ ...valid, model: 'chat' })).toMatchObject({
      param: 'model',
      message: expect.stringContaining('/v1/chat/completions'),
    });
  });

  it('should leave Anthropic routes out, and refuse a model served only by Anthropic', () => {
    const admitted = validateEmbeddingRequest(valid, find);

    expect(admitted.embedding.routes.map((r) => r.channel.type)).toEqual(['openai', 'gemini']);
    expect(rejection({ ...valid, model: 'claude-only' }).param).toBe('model');
  });

  it('should keep token ids and batches over 100 away from Gemini routes', () => {
    const types = (input: unknown) =>
      validateEmbeddingRequest({ ...valid, input }, find).embedding.routes.map((r) => r.channel.type);

    expect(types([[1, 2]])).toEqual(['openai']);
    expect(types(Array.from({ length: 101 }, () => 'x'))).toEqual(['openai']);
    expect(types(Array.from({ length: 100 }, () => 'x'))).toEqual(['openai', 'gemini']);
    expect(rejection({ model: 'gemini-only', input: [1, 2] }).param).toBe('input');
  });
});
