import { MessagesStreamWriter } from 'src/modules/messages/messages-stream';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}`;
const usageChunk = (prompt: number, completion: number) =>
  `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion } })}`;

function events(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [name, data] = block.split('\n');
      return { event: name.slice(7), data: JSON.parse(data.slice(6)) };
    });
}

describe('MessagesStreamWriter', () => {
  it('should write text as one block, then message_delta with the stop reason and usage, then message_stop', () => {
    const writer = new MessagesStreamWriter('m');
    const text =
      writer.write([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' })]) +
      writer.write([chunk({}, 'length'), usageChunk(9, 2)]) +
      writer.end();

    const written = events(text);
    expect(written.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(written[0].data.message).toMatchObject({ type: 'message', role: 'assistant', model: 'm', content: [] });
    expect(written[1].data).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    expect(written[2].data.delta).toEqual({ type: 'text_delta', text: 'Hel' });
    expect(written[5].data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'max_tokens', stop_sequence: null },
      usage: { input_tokens: 9, output_tokens: 2 },
    });
  });

  it('should close the text block and open one tool_use block per call, with input_json_delta pieces', () => {
    const writer = new MessagesStreamWriter('m');
    const text =
      writer.write([
        chunk({ content: 'Looking.' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'w', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":1}' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', function: { name: 'v', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
      ]) + writer.end();

    const written = events(text).map((e) => e.data);
    expect(written.filter((d) => d.type === 'content_block_start').map((d) => [d.index, d.content_block])).toEqual([
      [0, { type: 'text', text: '' }],
      [1, { type: 'tool_use', id: 'call_a', name: 'w', input: {} }],
      [2, { type: 'tool_use', id: 'call_b', name: 'v', input: {} }],
    ]);
    const json = written
      .filter((d) => d.delta?.type === 'input_json_delta')
      .map((d) => [d.index, d.delta.partial_json]);
    expect(json).toEqual([
      [1, '{"ci'],
      [1, 'ty":1}'],
      [2, '{}'],
    ]);
    expect(written.filter((d) => d.type === 'content_block_stop').map((d) => d.index)).toEqual([0, 1, 2]);
    expect(written.at(-2).delta.stop_reason).toBe('tool_use');
  });

  it('should end a cut stream with an error event and nothing after it', () => {
    const writer = new MessagesStreamWriter('m');
    const text =
      writer.write([chunk({ content: 'Hi' })]) +
      writer.fail({ error: { message: 'cut', type: 'server_error', param: null, code: 'upstream_stream_broken' } }) +
      writer.end();

    const written = events(text);
    expect(written.at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: 'cut' } },
    });
    expect(written.map((e) => e.event)).not.toContain('message_stop');
  });
});
