import { ApiError } from 'src/common/errors/api-error';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { CatalogModel, CatalogRoute } from 'src/modules/models/catalog.service';
import { anthropicHeaders, anthropicPassThrough } from 'src/modules/messages/anthropic-pass-through';
import { replayedThinkingTokens, translateMessagesRequest } from 'src/modules/messages/messages-request';

const model: CatalogModel = {
  id: 'gateway-claude',
  inputPrice: 1_000n,
  outputPrice: 2_000n,
  maxOutputTokens: 4096,
  vision: false,
  kind: 'chat',
  rpm: 60,
  tpm: 10_000,
  created: 0,
  ownedBy: 'anthropic',
  routes: [],
};
const route = {
  channel: {
    id: 'ch',
    type: 'anthropic',
    baseUrl: 'http://upstream/v1',
    apiKey: 'channel-key',
    priority: 0,
    weight: 1,
  },
  upstreamModel: 'claude-upstream',
} as unknown as CatalogRoute;
const chat = (maxTokens: number | null, stream = false): ChatRequest => ({
  model,
  stream,
  maxTokens,
  n: 1,
  includeUsage: stream,
});
const body = {
  model: 'gateway-claude',
  max_tokens: 300,
  top_k: 3,
  thinking: { type: 'enabled', budget_tokens: 200 },
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] }],
};
const headers = { version: '2023-06-01', beta: null };

const sse = (type: string, fields: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}`;

describe('anthropicHeaders', () => {
  it('should default the version, and join repeated anthropic-beta headers into one list', () => {
    expect(anthropicHeaders({})).toEqual({ version: '2023-06-01', beta: null });
    expect(anthropicHeaders({ 'anthropic-version': '2024-10-22', 'anthropic-beta': ['a-1', 'b-2'] })).toEqual({
      version: '2024-10-22',
      beta: 'a-1,b-2',
    });
  });

  it.each([
    ['anthropic-version', '2023-06-01\r\nx-evil: 1'],
    ['anthropic-version', 'x'.repeat(65)],
    ['anthropic-beta', 'a b'],
    ['anthropic-beta', `${'a'.repeat(600)},${'b'.repeat(600)}`],
  ])('should refuse a hostile %s with a 400 naming it', (name, value) => {
    const refuse = () => anthropicHeaders({ [name]: value });
    expect(refuse).toThrow(ApiError);
    expect(refuse).toThrow(expect.objectContaining({ param: name }) as Error);
  });
});

describe('anthropicPassThrough', () => {
  it('should send the client body with only the model swapped and max_tokens the validated cap', () => {
    const passed = anthropicPassThrough(body, { version: 'v1', beta: 'b-1' }, 'gateway-claude', route, chat(300));

    expect(passed.request.path).toBe('/messages');
    expect(JSON.parse(passed.request.payload.toString())).toEqual({ ...body, model: 'claude-upstream' });
    expect(passed.request.headers).toEqual({
      'x-api-key': 'channel-key',
      'anthropic-version': 'v1',
      'anthropic-beta': 'b-1',
      'content-type': 'application/json',
    });
  });

  it('should pass the answer as it came with the gateway model, billing its usage with the cache apart', () => {
    const passed = anthropicPassThrough(body, headers, 'gateway-claude', route, chat(300));
    const upstream = {
      id: 'msg_1',
      type: 'message',
      model: 'claude-upstream',
      content: [
        { type: 'thinking', thinking: 'Let me see.', signature: 's' },
        { type: 'text', text: 'Hello.' },
      ],
      usage: { input_tokens: 10, cache_read_input_tokens: 4, cache_creation_input_tokens: 2, output_tokens: 7 },
    };

    const answer = passed.answer(upstream)!;

    expect(answer.usage).toEqual({ promptTokens: 16, completionTokens: 7, cachedTokens: 4, cacheWriteTokens: 2 });
    expect(answer.body({ promptTokens: 0, completionTokens: 0 })).toEqual({ ...upstream, model: 'gateway-claude' });
    expect(answer.deliveredTokens()).toBeGreaterThan(0);
    expect(passed.answer({ type: 'error', error: {} })).toBeNull();
  });

  it('should show the billed usage in Anthropic terms when the answer carried none', () => {
    const passed = anthropicPassThrough(body, headers, 'gateway-claude', route, chat(300));
    const answer = passed.answer({ type: 'message', content: [{ type: 'text', text: 'Hi there' }] })!;

    expect(answer.usage).toBeNull();
    expect(answer.body({ promptTokens: 9, completionTokens: 2, cachedTokens: 3 })).toMatchObject({
      usage: { input_tokens: 6, cache_read_input_tokens: 3, cache_creation_input_tokens: 0, output_tokens: 2 },
    });
  });

  describe('stream', () => {
    const start = sse('message_start', {
      message: {
        id: 'msg_1',
        model: 'claude-upstream',
        usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 1 },
      },
    });

    it('should forward every event as it came but message_start, which shows the gateway model', () => {
      const { translator, writer } = anthropicPassThrough(body, headers, 'gw', route, chat(300, true)).stream();
      const delta = sse('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm' } });

      const [started] = translator.translate(start);
      expect(started.split('\n')[0]).toBe('event: message_start');
      expect(JSON.parse(started.split('\n')[1].slice(6)).message).toMatchObject({ id: 'msg_1', model: 'gw' });
      expect(translator.translate(delta)).toEqual([delta]);
      expect(translator.translate(': keep-alive')).toEqual([': keep-alive']);
      expect(writer.write([delta, sse('ping', {})])).toBe(`${delta}\n\n${sse('ping', {})}\n\n`);
      expect(writer.end()).toBe('');
    });

    it('should know the usage only once message_delta reports output, merged over message_start', () => {
      const { translator } = anthropicPassThrough(body, headers, 'gw', route, chat(300, true)).stream();
      translator.translate(start);
      expect(translator.usage()).toBeNull();

      translator.translate(sse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 12 } }));
      expect(translator.finished()).toBe(false);
      translator.translate(sse('message_stop', {}));

      expect(translator.usage()).toEqual({
        promptTokens: 15,
        completionTokens: 12,
        cachedTokens: 5,
        cacheWriteTokens: 0,
      });
      expect(translator.finished()).toBe(true);
    });

    it('should count delivered thinking, text and tool input, and not the signature', () => {
      const { translator } = anthropicPassThrough(body, headers, 'gw', route, chat(300, true)).stream();
      for (const delta of [
        { type: 'thinking_delta', thinking: 'one two ' },
        { type: 'signature_delta', signature: 'x'.repeat(500) },
        { type: 'text_delta', text: 'three ' },
        { type: 'input_json_delta', partial_json: '{"a":1}' },
      ]) {
        translator.translate(sse('content_block_delta', { index: 0, delta }));
      }
      expect(translator.deliveredTokens()).toBeLessThan(20);
      expect(translator.deliveredTokens()).toBeGreaterThanOrEqual(5);
    });

    it('should end a cut stream with one Anthropic error event, none after the upstream’s own', () => {
      const cut = anthropicPassThrough(body, headers, 'gw', route, chat(300, true)).stream();
      const failure = {
        error: { message: 'stopped', type: 'server_error', param: null, code: 'upstream_stream_broken' },
      };
      expect(cut.writer.fail(failure)).toBe(
        `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'stopped' } })}\n\n`,
      );

      const errored = anthropicPassThrough(body, headers, 'gw', route, chat(300, true)).stream();
      const upstreamError = sse('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
      expect(errored.translator.translate(upstreamError)).toEqual([upstreamError]);
      expect(errored.writer.fail(failure)).toBe('');
    });
  });
});

describe('replayedThinkingTokens', () => {
  it('should count the earlier turns’ thinking blocks, which the chat body leaves out', () => {
    const withThinking = {
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'Hi' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'a long chain of thought '.repeat(20), signature: 's' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Hello' },
          ],
        },
        { role: 'user', content: 'Go on' },
      ],
    };
    translateMessagesRequest(withThinking);

    expect(replayedThinkingTokens(withThinking)).toBeGreaterThan(100);
    expect(replayedThinkingTokens({ ...withThinking, messages: [{ role: 'user', content: 'Hi' }] })).toBe(0);
  });
});
