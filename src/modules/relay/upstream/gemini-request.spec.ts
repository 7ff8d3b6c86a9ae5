import { ApiError } from 'src/common/errors/api-error';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { geminiRequest, imageUrlsOf } from 'src/modules/relay/upstream/gemini-request';
import { InlineImage } from 'src/modules/relay/upstream/image-fetch/image-fetcher';
import { CatalogModel } from 'src/modules/models/catalog.service';

const model = {
  id: 'gemini-test',
  maxOutputTokens: 1000,
  vision: true,
  kind: 'chat',
  routes: [],
} as unknown as CatalogModel;
const chat: ChatRequest = { model, stream: false, maxTokens: null, n: 1, includeUsage: false };
const NO_IMAGES = new Map<string, InlineImage>();
const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};
const TIME = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } };
const ask = [{ role: 'user', content: 'Weather in Paris and Rome?' }];

const build = (body: Record<string, unknown>, images = NO_IMAGES, request = chat) =>
  geminiRequest({ messages: ask, ...body }, request, images);

function refusal(body: Record<string, unknown>): { param: string | null; message: string } {
  try {
    build(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return { param: (error as ApiError).param, message: (error as ApiError).message };
  }
  throw new Error('not refused');
}

describe('geminiRequest', () => {
  it('should declare function tools with cleaned parameters, and none for a function without arguments', () => {
    expect(build({ tools: [WEATHER, TIME] }).tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
          { name: 'get_time' },
        ],
      },
    ]);
  });

  it.each([
    ['auto', { mode: 'AUTO' }],
    ['none', { mode: 'NONE' }],
    ['required', { mode: 'ANY' }],
    [
      { type: 'function', function: { name: 'get_time' } },
      { mode: 'ANY', allowedFunctionNames: ['get_time'] },
    ],
  ])('should map tool_choice %j to functionCallingConfig %j', (choice, config) => {
    expect(build({ tools: [WEATHER, TIME], tool_choice: choice }).toolConfig).toEqual({
      functionCallingConfig: config,
    });
  });

  it('should refuse a tool_choice naming an undeclared function, and other tool types', () => {
    expect(refusal({ tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'nope' } } }).param).toBe(
      'tool_choice',
    );
    expect(refusal({ tools: [{ type: 'custom', custom: { name: 'x' } }] }).param).toBe('tools[0]');
  });

  it('should send tool calls as functionCall parts and consecutive tool results as one turn of functionResponses', () => {
    const messages = [
      ...ask,
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_b', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: 'rainy' }] },
      { role: 'user', content: 'Thanks' },
    ];
    expect(build({ messages, tools: [WEATHER] }).contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
          { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { content: 'sunny' } } },
          { functionResponse: { name: 'get_weather', response: { content: 'rainy' } } },
        ],
      },
      { role: 'user', parts: [{ text: 'Thanks' }] },
    ]);
  });

  it('should refuse a tool result that answers no earlier call, naming its tool_call_id', () => {
    const messages = [...ask, { role: 'tool', tool_call_id: 'call_ghost', content: 'x' }];
    expect(refusal({ messages }).param).toBe('messages[1].tool_call_id');
  });

  it('should inline data URIs and fetched images, and list only URLs for fetching', () => {
    const url = 'https://images.example/cat.png';
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ];
    expect(imageUrlsOf({ messages })).toEqual([url]);
    const images = new Map([[url, { mimeType: 'image/png', data: 'BBBB' }]]);
    expect(build({ messages }, images).contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'What is this?' },
          { inlineData: { mimeType: 'image/jpeg', data: 'AAAA' } },
          { inlineData: { mimeType: 'image/png', data: 'BBBB' } },
        ],
      },
    ]);
  });

  it('should map response_format to JSON mode and structured output', () => {
    expect(build({ response_format: { type: 'json_object' } }).generationConfig).toMatchObject({
      responseMimeType: 'application/json',
    });
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const config = build({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema, strict: true } } })
      .generationConfig as Record<string, unknown>;
    expect(config).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: schema });
    expect(refusal({ response_format: { type: 'json_schema', json_schema: { name: 'a' } } }).param).toBe(
      'response_format',
    );
  });

  it('should map reasoning_effort to a thinking budget without thoughts in the answer', () => {
    expect(build({ reasoning_effort: 'low' }).generationConfig).toMatchObject({
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: false },
    });
    expect(build({ reasoning_effort: 'high' }).generationConfig).toMatchObject({
      thinkingConfig: { thinkingBudget: 24576 },
    });
    expect(refusal({ reasoning_effort: 'extreme' }).param).toBe('reasoning_effort');
  });

  it('should ask for n candidates', () => {
    expect(build({}, NO_IMAGES, { ...chat, n: 3, maxTokens: 50 }).generationConfig).toEqual({
      candidateCount: 3,
      maxOutputTokens: 50,
    });
  });

  it.each([
    [{ logprobs: true }, 'logprobs'],
    [{ top_logprobs: 2 }, 'top_logprobs'],
    [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
    [{ audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
    [{ modalities: ['text', 'audio'] }, 'modalities'],
    [{ prediction: { type: 'content', content: 'x' } }, 'prediction'],
    [{ parallel_tool_calls: false, tools: [WEATHER] }, 'parallel_tool_calls'],
    [{ functions: [WEATHER.function] }, 'functions'],
  ])('should refuse %j naming %s', (body, param) => {
    const refused = refusal(body);
    expect(refused.param).toBe(param);
    expect(refused.message).toMatch(/Gemini/);
  });

  it('should refuse a file given by id, naming the part', () => {
    const messages = [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }];
    expect(refusal({ messages }).param).toBe('messages[0].content[0]');
  });
});
