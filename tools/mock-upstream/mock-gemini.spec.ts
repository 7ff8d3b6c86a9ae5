import { FunctionCallingConfigMode, GoogleGenAI, Tool, Type } from '@google/genai';
import { MockUpstream, startMockUpstream } from 'tools/mock-upstream/mock-upstream.server';

/**
 * The mock's Gemini dialect read by Google's own client: what it answers must parse as a real
 * Gemini answer would, or the gateway's tests would prove the translation against a fiction.
 */
describe("the mock's Gemini dialect, read by the official @google/genai client", () => {
  let mock: MockUpstream;
  let ai: GoogleGenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    // The client's own fetch: its default reaches for Node's global undici dispatcher, which Jest's sandboxed global lacks.
    const httpOptions = {
      baseUrl: mock.url,
      apiVersion: 'v1beta',
      fetch: (url: string | URL, init?: RequestInit) => fetch(url, init),
    };
    ai = new GoogleGenAI({ apiKey: 'gemini-test-key', httpOptions });
  });
  afterAll(() => mock.close());

  const tools: Tool[] = [
    {
      functionDeclarations: [
        {
          name: 'get_weather',
          parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
        },
        { name: 'get_time', parameters: { type: Type.OBJECT, properties: { zone: { type: Type.STRING } } } },
      ],
    },
  ];
  const anyTool = { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } };

  it('should answer text that response.text reads, with usage', async () => {
    const response = await ai.models.generateContent({ model: 'gemini-mock', contents: 'Say hello' });
    expect(response.text).toBe('Hello from the mock upstream.');
    expect(response.candidates?.[0]).toMatchObject({ index: 0, finishReason: 'STOP' });
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 8, candidatesTokenCount: 5 });
    expect(mock.requests.at(-1)?.headers['x-goog-api-key']).toBe('gemini-test-key');
  });

  it('should answer parallel function calls that response.functionCalls reads', async () => {
    const response = await ai.models.generateContent({
      model: 'gemini-mock',
      contents: 'Weather and time?',
      config: { tools, toolConfig: anyTool },
    });
    expect(response.functionCalls).toEqual([
      { name: 'get_weather', args: { city: 'mock' } },
      { name: 'get_time', args: { zone: 'mock' } },
    ]);
  });

  it('should call only the allowed function, and none without ANY', async () => {
    const only = await ai.models.generateContent({
      model: 'gemini-mock',
      contents: 'Time?',
      config: {
        tools,
        toolConfig: {
          functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_time'] },
        },
      },
    });
    expect(only.functionCalls?.map((call) => call.name)).toEqual(['get_time']);
    const none = await ai.models.generateContent({
      model: 'gemini-mock',
      contents: 'Time?',
      config: { tools, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } } },
    });
    expect(none.functionCalls).toBeUndefined();
    expect(none.text).toBe('Hello from the mock upstream.');
  });

  it('should stream function calls, and several candidates side by side', async () => {
    const calls: unknown[] = [];
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-mock',
      contents: 'Weather and time?',
      config: { tools, toolConfig: anyTool },
    })) {
      calls.push(...(chunk.functionCalls ?? []));
    }
    expect(calls).toEqual([
      { name: 'get_weather', args: { city: 'mock' } },
      { name: 'get_time', args: { zone: 'mock' } },
    ]);

    const texts = ['', ''];
    let usage: unknown;
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-mock',
      contents: 'Say hello',
      config: { candidateCount: 2 },
    })) {
      for (const candidate of chunk.candidates ?? []) {
        texts[candidate.index ?? 0] += candidate.content?.parts?.map((part) => part.text ?? '').join('') ?? '';
      }
      usage = chunk.usageMetadata ?? usage;
    }
    expect(texts).toEqual(['Hello from the mock upstream.', 'Hello from the mock upstream.']);
    expect(usage).toMatchObject({ candidatesTokenCount: 10 });
  });

  it('should think when given a budget: thought parts apart from the text, counted in thoughtsTokenCount', async () => {
    const response = await ai.models.generateContent({
      model: 'gemini-mock',
      contents: 'Say hello',
      config: { thinkingConfig: { thinkingBudget: 1024 } },
    });
    // response.text leaves thought parts out, as the gateway must.
    expect(response.text).toBe('Hello from the mock upstream.');
    expect(response.candidates?.[0].content?.parts?.[0]).toMatchObject({ thought: true });
    expect(response.usageMetadata?.thoughtsTokenCount).toBe(6);
  });

  it('should answer JSON in the asked schema', async () => {
    const response = await ai.models.generateContent({
      model: 'gemini-mock',
      contents: 'A city',
      config: {
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object', properties: { city: { type: 'string' }, size: { type: 'integer' } } },
      },
    });
    expect(JSON.parse(response.text ?? '')).toEqual({ city: 'mock', size: 1 });
  });

  it('should name the function results it got back', async () => {
    const response = await ai.models.generateContent({
      model: 'gemini-mock',
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'sunny' } } }] },
      ],
    });
    expect(response.text).toBe('Results: get_weather {"content":"sunny"}');
  });
});
