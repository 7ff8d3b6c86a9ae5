import { completionToResponse } from 'src/modules/responses/responses-answer';
import { translateResponsesRequest } from 'src/modules/responses/responses-request';

const { echo } = translateResponsesRequest({ model: 'gpt-test', input: 'Hi', instructions: 'Be brief.' });

function completion(message: Record<string, unknown>, finishReason = 'stop') {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
    usage: {
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    },
  };
}

describe(completionToResponse.name, () => {
  it('should answer text as a completed response with one message item and the usage in Responses terms', () => {
    const response = completionToResponse(completion({ content: 'Hello there.' }), echo);

    expect(response).toMatchObject({
      id: expect.stringMatching(/^resp_/),
      object: 'response',
      created_at: expect.any(Number),
      status: 'completed',
      error: null,
      incomplete_details: null,
      model: 'gpt-test',
      instructions: 'Be brief.',
      store: false,
      previous_response_id: null,
      output: [
        {
          id: expect.stringMatching(/^msg_/),
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hello there.', annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 12,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 2 },
        total_tokens: 17,
      },
    });
  });

  it('should answer tool calls as function_call items, without an empty message', () => {
    const toolCalls = [
      { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } },
    ];

    const response = completionToResponse(completion({ content: null, tool_calls: toolCalls }, 'tool_calls'), echo);

    expect(response.status).toBe('completed');
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        call_id: 'call_a',
        name: 'weather',
        arguments: '{"city":"Paris"}',
      },
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        call_id: 'call_b',
        name: 'time',
        arguments: '{}',
      },
    ]);
  });

  it('should say incomplete, with the reason, when the answer hit max_output_tokens', () => {
    const response = completionToResponse(completion({ content: 'Hel' }, 'length'), echo);

    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('should carry a refusal as a refusal part', () => {
    const response = completionToResponse(completion({ content: null, refusal: 'I cannot.' }), echo);

    expect(response.output).toEqual([
      expect.objectContaining({ type: 'message', content: [{ type: 'refusal', refusal: 'I cannot.' }] }),
    ]);
  });
});
