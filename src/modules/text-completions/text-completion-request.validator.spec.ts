import { ApiError } from 'src/common/errors/api-error';
import { estimateEmbeddingTokens } from 'src/modules/billing/token-estimator';
import { ChannelType } from 'src/modules/channels/channel.entity';
import { CatalogModel, CatalogRoute } from 'src/modules/models/catalog.service';
import { validateTextCompletionRequest } from 'src/modules/text-completions/text-completion-request.validator';

const route = (type: ChannelType): CatalogRoute => ({
  upstreamModel: `${type}-instruct`,
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
const instruct: CatalogModel = {
  id: 'instruct',
  inputPrice: 1500n,
  outputPrice: 2000n,
  maxOutputTokens: 4096,
  vision: false,
  kind: 'completion',
  rpm: 60,
  tpm: 100_000,
  created: 0,
  ownedBy: 'openai',
  routes: [route('anthropic'), route('openai'), route('gemini')],
};
const models: CatalogModel[] = [
  instruct,
  { ...instruct, id: 'chat', kind: 'chat' },
  { ...instruct, id: 'embed', kind: 'embedding' },
  { ...instruct, id: 'claude-only', routes: [route('anthropic'), route('gemini')] },
];
const find = (id: string) => models.find((model) => model.id === id);
const valid = { model: 'instruct', prompt: 'Say this is a test' };

function rejection(body: unknown): { message: string; param: string | null } {
  try {
    validateTextCompletionRequest(body, find);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    return { message: (error as ApiError).message, param: (error as ApiError).param };
  }
  throw new Error('expected a rejection');
}

describe(validateTextCompletionRequest.name, () => {
  it('should hold the prompt and 16 output tokens by default, and keep only OpenAI routes', () => {
    const admitted = validateTextCompletionRequest(valid, find);

    expect(admitted.held).toEqual({ promptTokens: estimateEmbeddingTokens([valid.prompt]), completionTokens: 16 });
    expect(admitted.completion).toMatchObject({ maxTokens: 16, stream: false, includeUsage: false });
    expect(admitted.completion.routes.map((r) => r.channel.type)).toEqual(['openai']);
  });

  it('should hold max_tokens for every prompt, choice and best_of candidate, and count the suffix', () => {
    const body = { ...valid, prompt: ['a', 'b', 'c'], suffix: 'tail end', max_tokens: 10, n: 2, best_of: 3 };
    const admitted = validateTextCompletionRequest(body, find);

    expect(admitted.held).toEqual({
      promptTokens: estimateEmbeddingTokens(['a', 'b', 'c', 'tail end']),
      completionTokens: 10 * 3 * 2 * 3,
    });
  });

  it('should accept the four prompt shapes, counting token ids by their length', () => {
    const held = (prompt: unknown) => validateTextCompletionRequest({ ...valid, prompt, max_tokens: 1 }, find).held;

    expect(held('')).toEqual({ promptTokens: 1, completionTokens: 1 });
    expect(held(['x', 'y']).completionTokens).toBe(2);
    expect(held([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toEqual({ promptTokens: 12, completionTokens: 1 });
    expect(held([[1], [2, 3]])).toEqual({ promptTokens: 4, completionTokens: 2 });
  });

  it('should refuse malformed prompts with a 400 naming prompt', () => {
    for (const prompt of [undefined, [], [[]], ['ok', 2], [[1], 'two'], [1.5], [-1], [{ text: 'x' }], 7, null]) {
      expect(rejection({ ...valid, prompt }).param).toBe('prompt');
    }
    expect(rejection({ ...valid, prompt: Array.from({ length: 2049 }, () => 'x') }).param).toBe('prompt');
  });

  it('should refuse out-of-range and mistyped parameters, naming each', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ temperature: 2.5 }, 'temperature'],
      [{ top_p: -0.1 }, 'top_p'],
      [{ presence_penalty: 3 }, 'presence_penalty'],
      [{ frequency_penalty: '1' }, 'frequency_penalty'],
      [{ max_tokens: -1 }, 'max_tokens'],
      [{ max_tokens: 1.5 }, 'max_tokens'],
      [{ max_tokens: 4097 }, 'max_tokens'],
      [{ n: 0 }, 'n'],
      [{ n: 129 }, 'n'],
      [{ best_of: 21 }, 'best_of'],
      [{ n: 3, best_of: 2 }, 'best_of'],
      [{ stream: true, n: 1, best_of: 2 }, 'best_of'],
      [{ logprobs: 6 }, 'logprobs'],
      [{ echo: 'yes' }, 'echo'],
      [{ stream: 'true' }, 'stream'],
      [{ stream_options: { include_usage: true } }, 'stream_options'],
      [{ stream: true, stream_options: { include_usage: 1 } }, 'stream_options.include_usage'],
      [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      [{ stop: 5 }, 'stop'],
      [{ logit_bias: { abc: 1 } }, 'logit_bias'],
      [{ logit_bias: { '50256': -101 } }, 'logit_bias'],
      [{ logit_bias: [1] }, 'logit_bias'],
      [{ seed: 1.5 }, 'seed'],
      [{ suffix: 3 }, 'suffix'],
      [{ user: 'u'.repeat(513) }, 'user'],
    ];
    for (const [extra, param] of cases) {
      expect({ extra, param: rejection({ ...valid, ...extra }).param }).toEqual({ extra, param });
    }
  });

  it('should accept every documented parameter within its bounds', () => {
    const body = {
      ...valid,
      max_tokens: 0,
      temperature: 0.2,
      top_p: 0.9,
      n: 2,
      best_of: 2,
      stream: true,
      stream_options: { include_usage: true },
      logprobs: 5,
      echo: true,
      stop: ['\n'],
      presence_penalty: -2,
      frequency_penalty: 2,
      logit_bias: { '50256': -100 },
      seed: 42,
      suffix: null,
      user: 'u-1',
    };

    expect(validateTextCompletionRequest(body, find).completion).toMatchObject({ stream: true, includeUsage: true });
  });

  it('should refuse a missing, unknown, chat or embedding model, or one without an OpenAI route, naming model', () => {
    expect(rejection({ prompt: 'x' }).param).toBe('model');
    expect(rejection({ ...valid, model: 'nope' }).param).toBe('model');
    expect(rejection({ ...valid, model: 'chat' })).toMatchObject({
      param: 'model',
      message: expect.stringContaining('POST /v1/chat/completions'),
    });
    expect(rejection({ ...valid, model: 'embed' })).toMatchObject({
      param: 'model',
      message: expect.stringContaining('POST /v1/embeddings'),
    });
    expect(rejection({ ...valid, model: 'claude-only' })).toMatchObject({
      param: 'model',
      message: expect.stringContaining('OpenAI-compatible'),
    });
  });
});
