import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';
import { THINKING_TEXT } from 'tools/mock-upstream/mock-anthropic-blocks';
import { MockUpstream, startMockUpstream } from 'tools/mock-upstream/mock-upstream.server';

const WEATHER = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'unit'],
  },
};
const TIME = {
  name: 'get_time',
  input_schema: { type: 'object' as const, properties: { zone: { type: 'string' } }, required: ['zone'] },
};
const user = (text: string) => ({ role: 'user' as const, content: text });

/**
 * The fake Anthropic server checked with the official @anthropic-ai/sdk pointed at it: what the SDK
 * parses (messages.create) and accumulates (messages.stream → finalMessage) must be what Anthropic
 * itself would give for tool use, thinking and structured output.
 */
describe('mock upstream: Anthropic tool use, thinking and structured output through @anthropic-ai/sdk', () => {
  let mock: MockUpstream;
  let client: Anthropic;

  beforeAll(async () => {
    mock = await startMockUpstream();
    // This SDK sends the key as a bearer token; the mock, like the gateway's channels, reads x-api-key.
    const headers = { 'x-api-key': 'mock-anthropic-key' };
    client = new Anthropic({ apiKey: 'mock-anthropic-key', baseURL: mock.url, maxRetries: 0, defaultHeaders: headers });
  });
  afterAll(() => mock.close());

  it('should answer a forced tool_choice any with one toolu_ block per tool and stop_reason tool_use', async () => {
    const message = await client.messages.create({
      model: 'claude-mock',
      max_tokens: 256,
      messages: [user('Weather and time in Paris?')],
      tools: [WEATHER, TIME],
      tool_choice: { type: 'any' },
    });
    expect(message.id).toMatch(/^msg_/);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      {
        type: 'tool_use',
        id: expect.stringMatching(/^toolu_/),
        name: 'get_weather',
        input: { city: 'mock', unit: 'celsius' },
      },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'get_time', input: { zone: 'mock' } },
    ]);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('should stream tool input as input_json_delta that the SDK assembles into the input object', async () => {
    const stream = client.messages.stream({
      model: 'claude-mock',
      max_tokens: 256,
      messages: [user('Weather in Paris?')],
      tools: [WEATHER, TIME],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });
    const events: string[] = [];
    stream.on('streamEvent', (event) => events.push(event.type));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      {
        type: 'tool_use',
        id: expect.stringMatching(/^toolu_/),
        name: 'get_weather',
        input: { city: 'mock', unit: 'celsius' },
      },
    ]);
    expect(events[0]).toBe('message_start');
    expect(events).toContain('content_block_start');
    expect(events.slice(-2)).toEqual(['message_delta', 'message_stop']);
  });

  it('should call only the first tool when parallel tool use is disabled', async () => {
    const message = await client.messages.create({
      model: 'claude-mock',
      max_tokens: 256,
      messages: [user('Weather and time?')],
      tools: [WEATHER, TIME],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
    expect(message.content.map((block) => block.type === 'tool_use' && block.name)).toEqual(['get_weather']);
  });

  it('should think before answering, with a signature, and count the thinking tokens apart', async () => {
    const request = {
      model: 'claude-mock',
      max_tokens: 2048,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      messages: [user('Say hi')],
    };
    const message = await client.messages.create(request);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: THINKING_TEXT, signature: expect.any(String) },
      { type: 'text', text: 'Hello from the mock upstream.' },
    ]);
    const thinkingTokens = THINKING_TEXT.split(' ').length;
    expect(message.usage.output_tokens_details).toEqual({ thinking_tokens: thinkingTokens });
    expect(message.usage.output_tokens).toBe(thinkingTokens + 5);

    const final = await client.messages.stream(request).finalMessage();
    expect(final.content).toEqual([
      { type: 'thinking', thinking: THINKING_TEXT, signature: expect.stringMatching(/^mock-signature-/) },
      { type: 'text', text: 'Hello from the mock upstream.' },
    ]);
    expect(final.usage.output_tokens).toBe(message.usage.output_tokens);
  });

  it('should answer structured output as one text block of JSON fitting the schema', async () => {
    const message = await client.messages.create({
      model: 'claude-mock',
      max_tokens: 256,
      messages: [user('A city, please')],
      output_config: {
        format: {
          type: 'json_schema',
          schema: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false },
        },
      },
    });
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content).toHaveLength(1);
    expect(message.content[0].type === 'text' && JSON.parse(message.content[0].text)).toEqual({ city: 'mock' });
  });

  it('should refuse what Anthropic refuses: thinking beside a forced tool, a budget above max_tokens', async () => {
    const base = { model: 'claude-mock', messages: [user('Hi')], tools: [WEATHER] };
    await expect(
      client.messages.create({
        ...base,
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tool_choice: { type: 'any' },
      }),
    ).rejects.toBeInstanceOf(BadRequestError);
    await expect(
      client.messages.create({ ...base, max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 1024 } }),
    ).rejects.toThrow(/max_tokens/);
  });

  it('should refuse a tool_result that answers no tool_use of the turn before', async () => {
    await expect(
      client.messages.create({
        model: 'claude-mock',
        max_tokens: 256,
        messages: [
          user('Weather?'),
          { role: 'assistant', content: 'Let me check.' },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_unknown', content: 'sunny' }] },
        ],
      }),
    ).rejects.toThrow(/tool_use_id/);
  });
});
