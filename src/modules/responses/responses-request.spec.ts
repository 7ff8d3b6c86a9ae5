import { ApiError } from 'src/common/errors/api-error';
import { responsesParam, translateResponsesRequest } from 'src/modules/responses/responses-request';

/** The 400 a body is refused with: its param, or a failure when it is accepted. */
function refusalOf(body: unknown): { status: number; param: string | null; message: string } {
  try {
    translateResponsesRequest(body);
  } catch (error) {
    if (error instanceof ApiError) {
      return { status: error.status, param: error.param, message: error.message };
    }
    throw error;
  }
  throw new Error('expected the body to be refused');
}

describe(translateResponsesRequest.name, () => {
  it('should make a string input one user message, after the instructions as a system message', () => {
    const { chatBody } = translateResponsesRequest({ model: 'm', input: 'Hi', instructions: 'Be terse.' });

    expect(chatBody).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Hi' },
      ],
    });
  });

  it('should translate message parts, function calls and their outputs to chat messages', () => {
    const { chatBody } = translateResponsesRequest({
      model: 'm',
      input: [
        { role: 'developer', content: 'Use tools.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather here?' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
            { type: 'input_file', file_data: 'data:application/pdf;base64,AAAA', filename: 'a.pdf' },
          ],
        },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_2', name: 'time', arguments: '{}' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call_output', call_id: 'call_1', output: '21C' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'noon' }] },
      ],
    });

    expect(chatBody.messages).toEqual([
      { role: 'developer', content: 'Use tools.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather here?' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,AAAA', filename: 'a.pdf' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'time', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '21C' },
      { role: 'tool', tool_call_id: 'call_2', content: 'noon' },
    ]);
  });

  it('should translate tools, tool_choice, text.format, max_output_tokens, reasoning and stream', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

    const { chatBody } = translateResponsesRequest({
      model: 'm',
      input: 'Hi',
      tools: [{ type: 'function', name: 'weather', description: 'Weather', parameters: schema, strict: true }],
      tool_choice: { type: 'function', name: 'weather' },
      text: { format: { type: 'json_schema', name: 'answer', schema, strict: true }, verbosity: 'low' },
      max_output_tokens: 300,
      reasoning: { effort: 'high', summary: 'auto' },
      stream: true,
      temperature: 0.5,
      top_p: 0.9,
      user: 'u-1',
      parallel_tool_calls: false,
    });

    expect(chatBody).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [
        { type: 'function', function: { name: 'weather', description: 'Weather', parameters: schema, strict: true } },
      ],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
      verbosity: 'low',
      max_completion_tokens: 300,
      reasoning_effort: 'high',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.5,
      top_p: 0.9,
      user: 'u-1',
      parallel_tool_calls: false,
    });
  });

  it('should say store: true only where answers are kept and the request did not say store: false', () => {
    const kept = (body: Record<string, unknown>, keeping: boolean) =>
      translateResponsesRequest({ model: 'm', input: 'Hi', ...body }, keeping).echo.store;

    expect([kept({}, true), kept({ store: true }, true), kept({ store: null }, true)]).toEqual([true, true, true]);
    expect([kept({ store: false }, true), kept({}, false), kept({ store: true }, false)]).toEqual([
      false,
      false,
      false,
    ]);
    expect(() => kept({ store: 'yes' }, true)).toThrow(expect.objectContaining({ param: 'store' }));
  });

  it('should map json_object, keep tool_choice strings, and drop fields with no chat counterpart', () => {
    const { chatBody, echo } = translateResponsesRequest({
      model: 'm',
      input: 'Hi',
      text: { format: { type: 'json_object' } },
      tool_choice: 'required',
      store: true,
      include: ['reasoning.encrypted_content'],
      truncation: 'auto',
      metadata: { team: 'a' },
      seed: 7,
    });

    expect(chatBody).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'Hi' }],
      response_format: { type: 'json_object' },
      tool_choice: 'required',
      seed: 7,
    });
    expect(echo).toMatchObject({ metadata: { team: 'a' }, truncation: 'auto', tool_choice: 'required' });
  });

  it.each([
    [{ model: 'm', input: 'Hi', previous_response_id: 'resp_1' }, 'previous_response_id'],
    [{ model: 'm', input: 'Hi', conversation: 'conv_1' }, 'conversation'],
    [{ model: 'm', input: 'Hi', background: true }, 'background'],
    [{ model: 'm' }, 'input'],
    [{ model: 'm', input: [] }, 'input'],
    [{ model: 'm', input: 7 }, 'input'],
    [{ model: 'm', input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [{ model: 'm', input: [{ role: 'user', content: [{ type: 'input_audio' }] }] }, 'input[0].content[0].type'],
    [
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] },
      'input[0].content[0].image_url',
    ],
    [{ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type'],
    [{ model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
    [{ model: 'm', input: [{ type: 'function_call_output', call_id: 'c', output: 3 }] }, 'input[0].output'],
    [{ model: 'm', input: 'Hi', tools: [{ type: 'web_search' }] }, 'tools'],
    [{ model: 'm', input: 'Hi', tools: [{ type: 'function' }] }, 'tools'],
    [{ model: 'm', input: 'Hi', tools: {} }, 'tools'],
    [{ model: 'm', input: 'Hi', tool_choice: 'sometimes' }, 'tool_choice'],
    [{ model: 'm', input: 'Hi', text: { format: { type: 'xml' } } }, 'text.format'],
    [{ model: 'm', input: 'Hi', text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name'],
    [{ model: 'm', input: 'Hi', text: { format: { type: 'json_schema', name: 'a' } } }, 'text.format.schema'],
    [{ model: 'm', input: 'Hi', text: { verbosity: 'loud' } }, 'text.verbosity'],
    [{ model: 'm', input: 'Hi', reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    [{ model: 'm', input: 'Hi', instructions: 3 }, 'instructions'],
    [{ model: 'm', input: 'Hi', metadata: { n: 1 } }, 'metadata'],
    [{ model: 'm', input: 'Hi', messages: [] }, 'messages'],
    [{ model: 'm', input: 'Hi', max_tokens: 5 }, 'max_tokens'],
  ])('should refuse %j with a 400 naming %s', (body, param) => {
    expect(refusalOf(body)).toMatchObject({ status: 400, param });
  });

  it('should say why previous_response_id is refused', () => {
    expect(refusalOf({ model: 'm', input: 'Hi', previous_response_id: 'resp_1' }).message).toMatch(
      /never keeps a request's input/,
    );
  });

  it('should refuse a body that is not an object', () => {
    expect(refusalOf([1, 2])).toMatchObject({ status: 400, param: null });
  });
});

describe(responsesParam.name, () => {
  it.each([
    ['messages', 'input'],
    ['messages[2].content', 'input'],
    ['max_completion_tokens', 'max_output_tokens'],
    ['response_format', 'text.format'],
    ['reasoning_effort', 'reasoning.effort'],
    ['stream_options', 'stream'],
    ['temperature', 'temperature'],
    ['model', 'model'],
  ])('should name %s as %s', (chat, responses) => {
    expect(responsesParam(chat)).toBe(responses);
  });
});
