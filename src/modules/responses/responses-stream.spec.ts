import { ResponsesStreamWriter } from 'src/modules/responses/responses-stream';
import { translateResponsesRequest } from 'src/modules/responses/responses-request';

const { echo } = translateResponsesRequest({ model: 'gpt-test', input: 'Hi' });

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] })}`;
const usageChunk = (prompt: number, completion: number) =>
  `data: ${JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })}`;

/** The named events of a writer's output, each with its `event:` name and parsed data. */
function eventsOf(text: string): { name: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      return { name: eventLine.slice('event: '.length), data: JSON.parse(dataLine.slice('data: '.length)) };
    });
}

describe(ResponsesStreamWriter.name, () => {
  it('should write text deltas as the Responses events in order, numbered, ending with the usage', () => {
    const writer = new ResponsesStreamWriter(echo);

    const text =
      writer.write([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' })]) +
      writer.write([chunk({ content: 'lo' }), chunk({}, 'stop'), usageChunk(9, 2)]) +
      writer.end();

    const events = eventsOf(text);
    expect(events.map((event) => event.name)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.every((event) => event.data.type === event.name)).toBe(true);
    expect(events.map((event) => event.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0].data.response).toMatchObject({ status: 'in_progress', model: 'gpt-test', output: [] });
    expect(events.filter((e) => e.name === 'response.output_text.delta').map((e) => e.data.delta)).toEqual([
      'Hel',
      'lo',
    ]);
    expect(events[6].data).toMatchObject({ text: 'Hello', output_index: 0, content_index: 0 });
    const completed = events.at(-1)!.data.response;
    expect(completed).toMatchObject({
      id: events[0].data.response.id,
      status: 'completed',
      output: [{ type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Hello' }] }],
      usage: { input_tokens: 9, output_tokens: 2, total_tokens: 11 },
    });
  });

  it('should stream a tool call as a function_call item with argument deltas after the text', () => {
    const writer = new ResponsesStreamWriter(echo);
    const call = { index: 0, id: 'call_9', type: 'function', function: { name: 'weather', arguments: '' } };

    const text =
      writer.write([
        chunk({ role: 'assistant', content: 'Let me check.' }),
        chunk({ tool_calls: [call] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk(20, 6),
      ]) + writer.end();

    const events = eventsOf(text);
    expect(events.map((event) => event.name)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[8].data).toMatchObject({
      output_index: 1,
      item: { type: 'function_call', call_id: 'call_9', name: 'weather', arguments: '' },
    });
    expect(events[11].data).toMatchObject({ arguments: '{"city":"Paris"}', output_index: 1 });
    expect(events.at(-1)!.data.response.output).toEqual([
      expect.objectContaining({ type: 'message' }),
      expect.objectContaining({ type: 'function_call', arguments: '{"city":"Paris"}', status: 'completed' }),
    ]);
  });

  it('should end a stream cut short with response.failed carrying the error and what was delivered', () => {
    const writer = new ResponsesStreamWriter(echo);

    const text =
      writer.write([chunk({ content: 'Hel' })]) +
      writer.fail({
        error: { message: 'The upstream stopped.', type: 'server_error', param: null, code: 'upstream_stream_broken' },
      });

    const events = eventsOf(text);
    expect(events.at(-1)).toMatchObject({
      name: 'response.failed',
      data: {
        response: {
          status: 'failed',
          error: { code: 'upstream_stream_broken', message: 'The upstream stopped.' },
          output: [{ type: 'message', status: 'incomplete', content: [{ text: 'Hel' }] }],
        },
      },
    });
    expect(writer.end()).toBe('');
  });

  it('should turn an error event of the upstream into response.failed, once', () => {
    const writer = new ResponsesStreamWriter(echo);
    const error = { error: { message: 'Overloaded', type: 'server_error', code: 'overloaded' } };

    const text = writer.write([chunk({ content: 'a' }), `data: ${JSON.stringify(error)}`, chunk({ content: 'b' })]);

    const names = eventsOf(text).map((event) => event.name);
    expect(names.at(-1)).toBe('response.failed');
    expect(names.filter((name) => name === 'response.output_text.delta')).toHaveLength(1);
    expect(writer.fail(error as never)).toBe('');
  });

  it('should say incomplete when the answer hit max_output_tokens', () => {
    const writer = new ResponsesStreamWriter(echo);

    const events = eventsOf(writer.write([chunk({ content: 'a' }), chunk({}, 'length')]) + writer.end());

    expect(events.at(-1)).toMatchObject({
      name: 'response.incomplete',
      data: { response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } },
    });
  });

  it('should start the stream even when the answer had no content', () => {
    const writer = new ResponsesStreamWriter(echo);

    const names = eventsOf(writer.end()).map((event) => event.name);

    expect(names).toEqual(['response.created', 'response.in_progress', 'response.completed']);
  });
});
