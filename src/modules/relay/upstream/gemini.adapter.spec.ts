import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { GeminiAdapter } from 'src/modules/relay/upstream/gemini.adapter';
import { CatalogModel, CatalogRoute } from 'src/modules/models/catalog.service';

const model = {
  id: 'gemini-test',
  maxOutputTokens: 1000,
  vision: true,
  kind: 'chat',
  routes: [],
} as unknown as CatalogModel;
const route = { upstreamModel: 'gemini-2.5-flash', channel: { apiKey: 'k' } } as unknown as CatalogRoute;
const chat = (n = 1): ChatRequest => ({ model, stream: true, maxTokens: null, n, includeUsage: true });
const adapter = new GeminiAdapter();

type Chunk = {
  choices: { index: number; delta: Record<string, unknown>; finish_reason: string | null }[];
  usage?: Record<string, unknown>;
};

function streamed(events: object[], n = 1): { chunks: Chunk[]; finished: boolean } {
  const translator = adapter.streamTranslator(route, chat(n));
  const chunks = events
    .flatMap((event) => translator.translate(`data: ${JSON.stringify(event)}`))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Chunk);
  return { chunks, finished: translator.finished() };
}

const call = (name: string, args: object) => ({ functionCall: { name, args } });
const USAGE = { promptTokenCount: 10, candidatesTokenCount: 4, thoughtsTokenCount: 7, totalTokenCount: 21 };

describe('GeminiAdapter', () => {
  it('should stream function calls as tool_calls deltas numbered per candidate, with call ids, ending in tool_calls', () => {
    const { chunks, finished } = streamed([
      { candidates: [{ index: 0, content: { role: 'model', parts: [call('get_weather', { city: 'Paris' })] } }] },
      {
        candidates: [{ index: 0, content: { parts: [call('get_weather', { city: 'Rome' })] }, finishReason: 'STOP' }],
        usageMetadata: USAGE,
      },
    ]);
    expect(finished).toBe(true);
    const calls = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? [])) as {
      index: number;
      id: string;
      function: { name: string; arguments: string };
    }[];
    expect(calls.map((c) => [c.index, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      [0, 'get_weather', { city: 'Paris' }],
      [1, 'get_weather', { city: 'Rome' }],
    ]);
    expect(calls.every((c) => /^call_\w{24}$/.test(c.id))).toBe(true);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    const finish = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter(Boolean);
    expect(finish).toEqual(['tool_calls']);
    expect(chunks.at(-1)?.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 11,
      total_tokens: 21,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 7 },
    });
  });

  it('should stream every candidate under its own index and end only when all have finished', () => {
    const text = (index: number, words: string, finishReason?: string) => ({
      index,
      content: { role: 'model', parts: [{ text: words }] },
      ...(finishReason ? { finishReason } : {}),
    });
    const first = streamed(
      [{ candidates: [text(0, 'Hi '), text(1, 'Hello ')] }, { candidates: [text(0, 'there', 'STOP')] }],
      2,
    );
    expect(first.finished).toBe(false);
    const { chunks, finished } = streamed(
      [
        { candidates: [text(0, 'Hi '), text(1, 'Hello ')] },
        { candidates: [text(0, 'there', 'STOP')] },
        { candidates: [text(1, 'you', 'MAX_TOKENS')], usageMetadata: USAGE },
      ],
      2,
    );
    expect(finished).toBe(true);
    const byIndex = (index: number) =>
      chunks
        .flatMap((chunk) => chunk.choices)
        .filter((choice) => choice.index === index)
        .map((choice) => (choice.delta.content as string | undefined) ?? '')
        .join('');
    expect([byIndex(0), byIndex(1)]).toEqual(['Hi there', 'Hello you']);
    const finishes = chunks.flatMap((chunk) => chunk.choices).filter((choice) => choice.finish_reason);
    expect(finishes.map((choice) => [choice.index, choice.finish_reason])).toEqual([
      [0, 'stop'],
      [1, 'length'],
    ]);
  });

  it('should never show thought parts as content', () => {
    const { chunks } = streamed([
      {
        candidates: [
          {
            index: 0,
            content: { parts: [{ text: 'Let me think about it', thought: true }, { text: 'Answer.' }] },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: USAGE,
      },
    ]);
    const content = chunks
      .flatMap((chunk) => chunk.choices.map((choice) => (choice.delta.content as string | undefined) ?? ''))
      .join('');
    expect(content).toBe('Answer.');

    const answer = adapter.toCompletion(
      {
        candidates: [
          { index: 0, content: { parts: [{ text: 'hmm', thought: true }, { text: 'Answer.' }] }, finishReason: 'STOP' },
        ],
        usageMetadata: USAGE,
      },
      'gemini-test',
    );
    expect(answer).toMatchObject({
      choices: [{ index: 0, message: { role: 'assistant', content: 'Answer.' }, finish_reason: 'stop' }],
      usage: { completion_tokens: 11, completion_tokens_details: { reasoning_tokens: 7 } },
    });
  });

  it('should answer parallel function calls in JSON with call ids and no stray fields', () => {
    const answer = adapter.toCompletion(
      {
        candidates: [{ index: 0, content: { parts: [call('a', { x: 1 }), call('b', {})] }, finishReason: 'STOP' }],
        usageMetadata: USAGE,
      },
      'gemini-test',
    ) as { choices: { message: { content: unknown; tool_calls: Record<string, unknown>[] }; finish_reason: string }[] };
    const [choice] = answer.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'b', arguments: '{}' } },
    ]);
  });

  it('should build a request that fetches nothing for data URIs', async () => {
    const request = await adapter.buildRequest(
      route,
      {
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        ],
      },
      { ...chat(), stream: false },
    );
    expect(request.path).toBe('/models/gemini-2.5-flash:generateContent');
    expect(JSON.parse(request.payload.toString())).toMatchObject({
      contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] }],
    });
  });

  it('should refuse an image at a private address with a 400 naming messages', async () => {
    const body = {
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://127.0.0.1/a.png' } }] }],
    };
    await expect(adapter.buildRequest(route, body, chat())).rejects.toMatchObject({
      param: 'messages',
      message: expect.stringMatching(/private/),
    });
  });
});
