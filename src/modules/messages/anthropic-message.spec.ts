import { anthropicUsage, completionToMessage, stopReason } from 'src/modules/messages/anthropic-message';

describe('completionToMessage', () => {
  it('should give text then tool_use blocks, the stop reason and usage', () => {
    const message = completionToMessage(
      {
        choices: [
          {
            finish_reason: 'tool_calls',
            message: {
              content: 'Let me look.',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }],
            },
          },
        ],
        usage: { prompt_tokens: 12, completion_tokens: 5 },
      },
      'my-model',
    );

    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: 'my-model',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'call_1', name: 'w', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 5 },
    });
  });

  it('should give an empty text block for an empty answer, and {} for arguments that are not an object', () => {
    const empty = completionToMessage({ choices: [{ finish_reason: 'stop', message: { content: '' } }] }, 'm');
    const broken = completionToMessage(
      { choices: [{ message: { content: null, tool_calls: [{ function: { name: 'w', arguments: '{"cut' } }] } }] },
      'm',
    );

    expect(empty.content).toEqual([{ type: 'text', text: '' }]);
    expect(broken.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'w', input: {} }]);
  });
});

describe('stopReason and anthropicUsage', () => {
  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['content_filter', 'refusal'],
    [null, 'end_turn'],
  ])('should map finish_reason %s to %s', (finish, stop) => {
    expect(stopReason(finish)).toBe(stop);
  });

  it('should split cached prompt tokens out of input_tokens when the upstream said them', () => {
    expect(
      anthropicUsage({ prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60 } }),
    ).toEqual({ input_tokens: 40, cache_read_input_tokens: 60, output_tokens: 7 });
    expect(anthropicUsage({ prompt_tokens: 100, completion_tokens: 7 })).toEqual({
      input_tokens: 100,
      output_tokens: 7,
    });
  });
});
