import { ApiError } from 'src/common/errors/api-error';
import { messagesParam, translateMessagesRequest } from 'src/modules/messages/messages-request';

const base = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] };

function refusal(body: unknown): ApiError {
  try {
    translateMessagesRequest(body);
  } catch (error) {
    if (error instanceof ApiError) {
      return error;
    }
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('translateMessagesRequest', () => {
  it('should put system text first and keep model, max_tokens and sampling', () => {
    const chat = translateMessagesRequest({
      ...base,
      system: [
        { type: 'text', text: 'One.' },
        { type: 'text', text: 'Two.', cache_control: { type: 'ephemeral' } },
      ],
      temperature: 0.5,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
    });

    expect(chat).toEqual({
      model: 'm',
      max_tokens: 100,
      messages: [
        { role: 'system', content: 'One.\n\nTwo.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 0.5,
      top_p: 0.9,
      stop: ['END'],
      user: 'u-1',
    });
  });

  it('should turn tool_use into tool_calls and tool_result into tool messages placed before the user text', () => {
    const chat = translateMessagesRequest({
      ...base,
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 's' },
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'w', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'boom', is_error: true }] },
      ],
    });

    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      { role: 'user', content: 'And tomorrow?' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: boom' },
    ]);
  });

  it('should carry plain-text documents as text, which the hold counts', () => {
    const chat = translateMessagesRequest({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' } },
            { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'The sky is blue.' }] } },
            { type: 'text', text: 'What colour is the grass?' },
          ],
        },
      ],
    });

    expect(chat.messages).toEqual([
      { role: 'user', content: 'The grass is green.The sky is blue.What colour is the grass?' },
    ]);
  });

  it('should map tools and each tool_choice, and ask a stream for its usage', () => {
    const tools = [{ name: 'w', description: 'weather', input_schema: { type: 'object' } }];
    const fn = { type: 'function', function: { name: 'w', description: 'weather', parameters: { type: 'object' } } };
    const choice = (tool_choice: unknown) => translateMessagesRequest({ ...base, tools, tool_choice });

    expect(choice({ type: 'auto' })).toMatchObject({ tools: [fn], tool_choice: 'auto' });
    expect(choice({ type: 'any', disable_parallel_tool_use: true })).toMatchObject({
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    expect(choice({ type: 'tool', name: 'w' })).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'w' } },
    });
    expect(choice({ type: 'none' })).toMatchObject({ tool_choice: 'none' });
    expect(translateMessagesRequest({ ...base, stream: true })).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('should accept and drop top_k, thinking and service_tier, and relay unknown fields unread', () => {
    const chat = translateMessagesRequest({
      ...base,
      top_k: 5,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      service_tier: 'auto',
      mock: { status: 500 },
    });

    expect(chat).toEqual({
      model: 'm',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
      mock: { status: 500 },
    });
  });

  it.each([
    [{ ...base, max_tokens: undefined }, 'max_tokens'],
    [{ ...base, max_tokens: 0 }, 'max_tokens'],
    [{ ...base, model: 3 }, 'model'],
    [{ ...base, messages: [] }, 'messages'],
    [{ ...base, messages: [{ role: 'system', content: 'x' }] }, 'messages.0.role'],
    [{ ...base, messages: [{ role: 'user', content: 42 }] }, 'messages.0.content'],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'search_result' }] }] }, 'messages.0.content.0.type'],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'document' }] }] }, 'messages.0.content.0.source'],
    [
      {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x.test/a.pdf' } }] },
        ],
      },
      'messages.0.content.0.source.type',
    ],
    [
      { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] },
      'messages.0.content.0.source.type',
    ],
    [
      {
        ...base,
        messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'w', input: 'x' }] }],
      },
      'messages.0.content.0.input',
    ],
    [{ ...base, system: 7 }, 'system'],
    [{ ...base, temperature: 1.5 }, 'temperature'],
    [{ ...base, top_k: -1 }, 'top_k'],
    [{ ...base, stop_sequences: 'END' }, 'stop_sequences'],
    [{ ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0.type'],
    [{ ...base, tools: [{ name: 'w' }] }, 'tools.0.input_schema'],
    [{ ...base, tool_choice: { type: 'tool' } }, 'tool_choice.name'],
    [{ ...base, tool_choice: { type: 'tool', name: 'w' } }, 'tool_choice'],
    [{ ...base, metadata: { user_id: 5 } }, 'metadata.user_id'],
    [{ ...base, stop: ['x'] }, 'stop'],
  ])('should refuse %j with a 400 naming %s', (body, param) => {
    const error = refusal(body);

    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message.startsWith(`${param}: `)).toBe(true);
  });

  it('should name the Messages field for a chat validator param', () => {
    expect(messagesParam('stop')).toBe('stop_sequences');
    expect(messagesParam('user')).toBe('metadata.user_id');
    expect(messagesParam('messages[2].content')).toBe('messages');
    expect(messagesParam('model')).toBe('model');
  });
});
