import { ApiError } from 'src/common/errors/api-error';
import { validateChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { CatalogModel } from 'src/modules/models/catalog.service';

const textModel: CatalogModel = {
  id: 'text-model',
  inputPrice: 1n,
  outputPrice: 1n,
  maxOutputTokens: 100,
  vision: false,
  kind: 'chat',
  rpm: 60,
  tpm: 1000,
  created: 0,
  ownedBy: 'openai',
  routes: [],
};
const visionModel: CatalogModel = { ...textModel, id: 'vision-model', vision: true };
const embeddingModel: CatalogModel = { ...textModel, id: 'embedding-model', kind: 'embedding' };
const completionModel: CatalogModel = { ...textModel, id: 'completion-model', kind: 'completion' };
const find = (id: string) => [textModel, visionModel, embeddingModel, completionModel].find((model) => model.id === id);
const valid = { model: 'text-model', messages: [{ role: 'user', content: 'Hi' }] };

function rejection(body: unknown): { message: string; param: string | null } {
  try {
    validateChatRequest(body, find);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return { message: (error as ApiError).message, param: (error as ApiError).param };
  }
  throw new Error('expected a rejection');
}

describe(validateChatRequest.name, () => {
  it('should accept a minimal request with the defaults', () => {
    expect(validateChatRequest(valid, find)).toMatchObject({
      stream: false,
      maxTokens: null,
      n: 1,
      includeUsage: false,
    });
  });

  it('should accept fields it does not know and every role of the wire format', () => {
    const body = {
      ...valid,
      tools: [{ type: 'function', function: { name: 'f' } }],
      response_format: { type: 'json_object' },
      seed: 7,
      messages: [
        { role: 'developer', content: 'Be brief' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function' }] },
        { role: 'tool', tool_call_id: 'c1', content: '42' },
      ],
    };
    expect(() => validateChatRequest(body, find)).not.toThrow();
  });

  it.each([
    [[], null, 'must be a JSON object'],
    [{ messages: valid.messages }, 'model', 'Missing required parameter: model'],
    [{ model: 'text-model' }, 'messages', 'Missing required parameter: messages'],
    [{ ...valid, messages: [] }, 'messages', 'at least one'],
    [{ ...valid, messages: 'hi' }, 'messages', 'array'],
    [{ ...valid, messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role', 'role must be one of'],
    [{ ...valid, messages: [{ role: 'user' }] }, 'messages[0].content', 'Missing required parameter'],
    [{ ...valid, messages: [{ role: 'user', content: 5 }] }, 'messages[0].content', 'string or a non-empty array'],
    [{ ...valid, model: 'nope' }, 'model', "'nope' does not exist"],
    [{ ...valid, temperature: 2.5 }, 'temperature', 'between 0 and 2'],
    [{ ...valid, temperature: -0.1 }, 'temperature', 'between 0 and 2'],
    [{ ...valid, temperature: '1' }, 'temperature', 'must be a number'],
    [{ ...valid, top_p: 1.5 }, 'top_p', 'between 0 and 1'],
    [{ ...valid, presence_penalty: 3 }, 'presence_penalty', 'between -2 and 2'],
    [{ ...valid, frequency_penalty: -3 }, 'frequency_penalty', 'between -2 and 2'],
    [{ ...valid, max_tokens: -1 }, 'max_tokens', 'at least 1'],
    [{ ...valid, max_tokens: 1.5 }, 'max_tokens', 'integer'],
    [{ ...valid, max_tokens: 101 }, 'max_tokens', 'at most 100'],
    [{ ...valid, max_completion_tokens: 101 }, 'max_completion_tokens', 'at most 100'],
    [{ ...valid, n: 0 }, 'n', 'at least 1'],
    [{ ...valid, stream: 'yes' }, 'stream', 'boolean'],
    [{ ...valid, stop: [1] }, 'stop', 'stop must be'],
    [{ ...valid, stream_options: { include_usage: true } }, 'stream_options', "only allowed when 'stream'"],
    [{ ...valid, user: 42 }, 'user', 'user must be a string'],
    [{ ...valid, max_tokens: 50, max_completion_tokens: 101 }, 'max_completion_tokens', 'at most 100'],
    [{ ...valid, max_tokens: 101, max_completion_tokens: 50 }, 'max_tokens', 'at most 100'],
    [{ ...valid, max_tokens: 5, max_completion_tokens: -1 }, 'max_completion_tokens', 'at least 1'],
    [{ ...valid, service_tier: 'priority' }, 'service_tier', "'auto' or 'default'"],
    [{ ...valid, service_tier: 'flex' }, 'service_tier', "'auto' or 'default'"],
    [{ ...valid, service_tier: 1 }, 'service_tier', "'auto' or 'default'"],
    [
      { ...valid, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '%%' } }] }] },
      'messages[0].content[0].input_audio.data',
      'base64',
    ],
    [
      { ...valid, messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 5 } }] }] },
      'messages[0].content[0].file',
      'either file_data',
    ],
    [{ ...valid, tools: JSON.parse('['.repeat(65) + ']'.repeat(65)) as unknown }, 'tools', 'deeper than 64'],
    [{ ...valid, metadata: new Array(50_001).fill(0) }, 'metadata', 'more than 50000'],
  ])('should reject %j naming %p', (body, param, message) => {
    const error = rejection(body);
    expect(error.param).toBe(param);
    expect(error.message).toContain(message);
  });

  it('should refuse an embedding model with a 400 naming model', () => {
    const refused = rejection({ ...valid, model: 'embedding-model' });

    expect(refused.param).toBe('model');
    expect(refused.message).toContain('/v1/embeddings');
  });

  it('should refuse a legacy completion model with a 400 naming model and its route', () => {
    const refused = rejection({ ...valid, model: 'completion-model' });

    expect(refused.param).toBe('model');
    expect(refused.message).toContain('POST /v1/completions');
  });

  it('should take image parts only for vision models, and only well-formed ones', () => {
    const image = (url: string) => ({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    });
    expect(rejection({ model: 'text-model', ...image('https://x.test/a.png') }).param).toBe('messages');
    expect(() => validateChatRequest({ model: 'vision-model', ...image('https://x.test/a.png') }, find)).not.toThrow();
    expect(() =>
      validateChatRequest({ model: 'vision-model', ...image('data:image/png;base64,iVBORw0KGgo=') }, find),
    ).not.toThrow();
    expect(rejection({ model: 'vision-model', ...image('ftp://x.test/a.png') }).param).toBe(
      'messages[0].content[1].image_url.url',
    );
    expect(rejection({ model: 'vision-model', ...image('data:image/png,rawbytes') }).param).toBe(
      'messages[0].content[1].image_url.url',
    );
  });

  it('should accept the service tiers billed at the model prices, and hold the larger output cap', () => {
    expect(validateChatRequest({ ...valid, service_tier: 'auto' }, find).maxTokens).toBeNull();
    expect(validateChatRequest({ ...valid, service_tier: 'default', max_completion_tokens: 9 }, find).maxTokens).toBe(
      9,
    );
    expect(validateChatRequest({ ...valid, max_tokens: 1, max_completion_tokens: 90 }, find).maxTokens).toBe(90);
    expect(validateChatRequest({ ...valid, max_tokens: 90, max_completion_tokens: 1 }, find).maxTokens).toBe(90);
    expect(() =>
      validateChatRequest({ ...valid, tools: JSON.parse('['.repeat(64) + ']'.repeat(64)) }, find),
    ).not.toThrow();
  });

  it('should report streaming, n, the output cap and the usage request', () => {
    const body = { ...valid, stream: true, n: 2, max_tokens: 50, stream_options: { include_usage: true } };
    expect(validateChatRequest(body, find)).toMatchObject({ stream: true, n: 2, maxTokens: 50, includeUsage: true });
  });
});
