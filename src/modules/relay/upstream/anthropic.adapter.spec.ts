import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { AnthropicAdapter } from 'src/modules/relay/upstream/anthropic.adapter';
import { CatalogModel, CatalogRoute } from 'src/modules/models/catalog.service';

const model = { id: 'claude', maxOutputTokens: 8192 } as CatalogModel;
const route = { channel: { apiKey: 'upstream-key' }, upstreamModel: 'claude-up' } as CatalogRoute;
const chatOf = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  model,
  stream: false,
  maxTokens: null,
  n: 1,
  includeUsage: true,
  ...over,
});
const sut = new AnthropicAdapter();
const sent = (body: Record<string, unknown>, chat = chatOf()) =>
  JSON.parse(sut.buildRequest(route, body, chat).payload.toString()) as Record<string, any>;

/** Anthropic's named events as the SSE text the stream translator is given. */
const event = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}`;
const chunksOf = (lines: string[]) =>
  lines.filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as Record<string, any>);

describe(AnthropicAdapter.name, () => {
  describe('buildRequest', () => {
    it('should put tool results in one user turn after the assistant tool_use blocks', () => {
      const body = sent({
        messages: [
          { role: 'user', content: 'Weather and time in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
          { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: 'noon' }] },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      });
      expect(body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'noon' },
          ],
        },
      ]);
      expect(body.tools).toEqual([{ name: 'get_weather', input_schema: { type: 'object' } }]);
      expect(body.tool_choice).toEqual({ type: 'auto' });
    });

    it('should send a data URI as a base64 source and an https URL as a url source, keeping cache_control', () => {
      const body = sent({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
              { type: 'text', text: 'Compare', cache_control: { type: 'ephemeral' } },
            ],
          },
        ],
      });
      expect(body.messages[0].content).toEqual([
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        { type: 'text', text: 'Compare', cache_control: { type: 'ephemeral' } },
      ]);
    });

    it('should ask for thinking within the max_tokens the hold covers, and structured output for a json_schema', () => {
      const schema = { type: 'object', properties: { city: { type: 'string' } } };
      const body = sent(
        {
          messages: [{ role: 'user', content: 'A city' }],
          reasoning_effort: 'medium',
          response_format: { type: 'json_schema', json_schema: { name: 'city', schema } },
        },
        chatOf({ maxTokens: 3000 }),
      );
      expect(body).toMatchObject({
        max_tokens: 3000,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        output_config: { format: { type: 'json_schema', schema } },
      });
    });

    it('should add the JSON instruction after the client system prompt for a json_object', () => {
      const body = sent({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'A city as JSON' },
        ],
        response_format: { type: 'json_object' },
      });
      expect(body.system).toMatch(/^Be brief\.\n\nAnswer with one JSON object/);
      expect(body.output_config).toBeUndefined();
    });
  });

  describe('toCompletion', () => {
    it('should leave thinking out of the content and report thinking_tokens as reasoning tokens', () => {
      const completion = sut.toCompletion(
        {
          id: 'msg_1',
          type: 'message',
          content: [
            { type: 'thinking', thinking: 'secret musings', signature: 'sig' },
            { type: 'redacted_thinking', data: 'xyz' },
            { type: 'text', text: '{"city":"Paris"}' },
          ],
          stop_reason: 'end_turn',
          usage: { input_tokens: 10, output_tokens: 40, output_tokens_details: { thinking_tokens: 30 } },
        },
        'claude',
      );
      expect(completion?.choices).toEqual([
        {
          index: 0,
          logprobs: null,
          finish_reason: 'stop',
          message: { role: 'assistant', content: '{"city":"Paris"}' },
        },
      ]);
      expect(completion?.usage).toMatchObject({
        completion_tokens: 40,
        completion_tokens_details: { reasoning_tokens: 30 },
      });
    });

    it('should answer tool_use blocks as tool_calls with JSON arguments and finish_reason tool_calls', () => {
      const completion = sut.toCompletion(
        {
          id: 'msg_2',
          type: 'message',
          content: [{ type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: { city: 'Paris' } }],
          stop_reason: 'tool_use',
          usage: { input_tokens: 10, output_tokens: 5 },
        },
        'claude',
      );
      expect(completion?.choices).toEqual([
        {
          index: 0,
          logprobs: null,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'toolu_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
        },
      ]);
      expect(completion?.usage).not.toHaveProperty('completion_tokens_details');
    });
  });

  describe('streamTranslator', () => {
    it('should number tool calls, not content blocks, with the id and name on the first delta only', () => {
      const translator = sut.streamTranslator(route, chatOf({ stream: true }));
      const events = [
        { type: 'message_start', message: { id: 'msg_3', usage: { input_tokens: 10, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'secret musings' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: 'toolu_a', name: 'a', input: {} },
        },
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"x":' } },
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '1}' } },
        {
          type: 'content_block_start',
          index: 2,
          content_block: { type: 'tool_use', id: 'toolu_b', name: 'b', input: {} },
        },
        { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } },
        {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use' },
          usage: { output_tokens: 50, output_tokens_details: { thinking_tokens: 20 } },
        },
        { type: 'message_stop' },
      ];
      const chunks = chunksOf(events.flatMap((data) => translator.translate(event(data))));
      const deltas = chunks.filter((chunk) => chunk.choices.length > 0).map((chunk) => chunk.choices[0].delta);
      expect(deltas).toEqual([
        { role: 'assistant', content: '' },
        { tool_calls: [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'a', arguments: '' } }] },
        { tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] },
        { tool_calls: [{ index: 0, function: { arguments: '1}' } }] },
        { tool_calls: [{ index: 1, id: 'toolu_b', type: 'function', function: { name: 'b', arguments: '' } }] },
        { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
        {},
      ]);
      expect(chunks.at(-2)?.choices[0].finish_reason).toBe('tool_calls');
      expect(JSON.stringify(chunks)).not.toContain('secret musings');
      expect(chunks.at(-1)?.usage).toMatchObject({
        completion_tokens: 50,
        completion_tokens_details: { reasoning_tokens: 20 },
      });
      expect(translator.finished()).toBe(true);
    });

    it('should count thinking received before a cut as delivered, though it is never shown', () => {
      const translator = sut.streamTranslator(route, chatOf({ stream: true }));
      const events = [
        { type: 'message_start', message: { id: 'msg_4', usage: { input_tokens: 10, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'one two three four' } },
      ];
      const shown = events.flatMap((data) => translator.translate(event(data)));
      expect(chunksOf(shown).map((chunk) => chunk.choices[0].delta)).toEqual([{ role: 'assistant', content: '' }]);
      expect(translator.deliveredTokens()).toBeGreaterThanOrEqual(4);
      expect(translator.usage()).toBeNull();
      expect(translator.finished()).toBe(false);
    });
  });
});
