import { randomUUID } from 'node:crypto';
import { countMockPromptTokens, ReceivedRequest } from 'tools/mock-upstream/mock-upstream.server';
import { Customer, HttpResult, TestGateway } from 'test/support/gateway';
import { expectInvalidRequest, userMessage } from 'test/e2e/v1-helpers';

const MOCK_REPLY = 'Hello from the mock upstream.';
const UPSTREAM_MODEL = 'mock-gpt-2024-08-06';
const CHANNEL_KEY = 'upstream-secret-key-0123456789';
const PNG_DATA_URI =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('POST /v1/chat/completions (non-streaming)', () => {
  let gateway: TestGateway;
  let customer: Customer;
  /** Non-vision, at most 1000 output tokens, routed to the mock as UPSTREAM_MODEL. */
  let model: string;
  let visionModel: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    const channelId = `ch-${randomUUID().slice(0, 8)}`;
    await gateway.addChannel(channelId, { baseUrl: `${gateway.mock.url}/v1` });
    model = await gateway.addModel({
      maxOutputTokens: 1000,
      routes: [{ channelId, upstreamModel: UPSTREAM_MODEL }],
    });
    visionModel = await gateway.addModel({ vision: true, maxOutputTokens: 4096 });
    customer = await gateway.newCustomer({ balance: '10' });
  });
  afterAll(() => gateway.close());

  const chat = (body: Record<string, unknown>) => gateway.chat(customer.key, body);

  /** Sends one request and returns the response and what the upstream received for it (if anything). */
  async function chatAndCapture(
    body: Record<string, unknown>,
  ): Promise<{ response: HttpResult; received: ReceivedRequest[] }> {
    const before = gateway.mock.requests.length;
    const response = await chat(body);
    return { response, received: gateway.mock.requests.slice(before) };
  }

  describe('the completion object (SPEC 2.1)', () => {
    it('should answer a chat.completion with every field of SPEC 2.1', async () => {
      const messages = [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'Say hi to the whole world' },
      ];
      const startedAt = Math.floor(Date.now() / 1000);

      const response = await chat({ model, messages });

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body).toEqual(
        expect.objectContaining({
          id: expect.stringMatching(/\S/),
          object: 'chat.completion',
          created: expect.any(Number),
          model,
          system_fingerprint: expect.any(String),
          choices: [
            expect.objectContaining({
              index: 0,
              message: expect.objectContaining({ role: 'assistant', content: MOCK_REPLY }),
              finish_reason: 'stop',
            }),
          ],
        }),
      );
      const { created } = response.body;
      expect(Number.isInteger(created)).toBe(true);
      expect(created).toBeGreaterThanOrEqual(startedAt - 5);
      expect(created).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 5);
    });

    it('should report the usage the upstream counted', async () => {
      const messages = [
        { role: 'system', content: 'Answer in one short sentence.' },
        { role: 'user', content: 'What is the capital of France?' },
        { role: 'assistant', content: 'Paris.' },
        { role: 'user', content: 'And of Italy?' },
      ];

      const response = await chat({ model, messages, mock: { reply: 'Rome is the capital.' } });

      expect(response.status).toBe(200);
      const promptTokens = countMockPromptTokens(messages);
      expect(response.body.usage).toEqual(
        expect.objectContaining({ prompt_tokens: promptTokens, completion_tokens: 4, total_tokens: promptTokens + 4 }),
      );
    });

    it('should answer with our model id, while the upstream is asked for its own model name', async () => {
      const { response, received } = await chatAndCapture({ model, messages: userMessage() });

      expect(response.status).toBe(200);
      expect(response.body.model).toBe(model);
      expect(response.text).not.toContain(UPSTREAM_MODEL);
      expect(received).toHaveLength(1);
      expect((received[0].body as { model: string }).model).toBe(UPSTREAM_MODEL);
    });

    it('should relay the reply text unchanged, Unicode included', async () => {
      const reply = 'Grüße aus 東京 🎉 — "quoted" \\ back\\slash\nnew line';

      const response = await chat({ model, messages: userMessage(), mock: { reply } });

      expect(response.status).toBe(200);
      expect(response.body.choices[0].message.content).toBe(reply);
    });

    it('should answer a new id for each completion', async () => {
      const first = await chat({ model, messages: userMessage() });
      const second = await chat({ model, messages: userMessage() });

      expect(first.body.id).not.toBe(second.body.id);
    });

    it('should answer finish_reason length with a truncated reply when max_tokens is reached', async () => {
      const response = await chat({ model, messages: userMessage(), max_tokens: 2 });

      expect(response.status).toBe(200);
      expect(response.body.choices[0].finish_reason).toBe('length');
      expect(response.body.choices[0].message.content).toBe('Hello from ');
      expect(response.body.usage.completion_tokens).toBe(2);
    });

    it('should answer finish_reason stop when max_tokens leaves room for the whole reply', async () => {
      const response = await chat({ model, messages: userMessage(), max_tokens: 1000 });

      expect(response.status).toBe(200);
      expect(response.body.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: MOCK_REPLY } });
    });

    it('should answer one choice per candidate with n: 2', async () => {
      const response = await chat({ model, messages: userMessage(), n: 2 });

      expect(response.status).toBe(200);
      expect(response.body.choices).toHaveLength(2);
      expect(response.body.choices.map((choice: { index: number }) => choice.index)).toEqual([0, 1]);
      for (const choice of response.body.choices) {
        expect(choice).toMatchObject({ message: { role: 'assistant', content: MOCK_REPLY }, finish_reason: 'stop' });
      }
      expect(response.body.usage.completion_tokens).toBe(10);
    });

    it('should answer JSON, not an event stream, with stream: false', async () => {
      const response = await chat({ model, messages: userMessage(), stream: false });

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body.object).toBe('chat.completion');
    });

    it('should include usage with the three counts even when the upstream omits it', async () => {
      const response = await chat({ model, messages: userMessage(), mock: { omit_usage: true } });

      expect(response.status).toBe(200);
      const { usage } = response.body;
      expect(usage).toEqual(
        expect.objectContaining({
          prompt_tokens: expect.any(Number),
          completion_tokens: expect.any(Number),
          total_tokens: expect.any(Number),
        }),
      );
      expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
      expect(usage.prompt_tokens).toBeGreaterThan(0);
    });
  });

  describe('accepted requests', () => {
    it.each([
      ['temperature 0', { temperature: 0 }],
      ['temperature 2', { temperature: 2 }],
      ['temperature 1.5', { temperature: 1.5 }],
      ['presence_penalty -2', { presence_penalty: -2 }],
      ['presence_penalty 2', { presence_penalty: 2 }],
      ['frequency_penalty -2', { frequency_penalty: -2 }],
      ['frequency_penalty 2', { frequency_penalty: 2 }],
      ['max_tokens equal to the model maximum', { max_tokens: 1000 }],
      ['top_p 0.5', { top_p: 0.5 }],
      ['a stop string', { stop: 'END' }],
      ['a stop array', { stop: ['END', 'STOP'] }],
      ['a user id', { user: 'end-user-42' }],
      ['n: 1', { n: 1 }],
      ['null optional fields', { temperature: null, max_tokens: null, stop: null }],
    ])('should accept %s', async (_name, extra) => {
      const response = await chat({ model, messages: userMessage(), ...extra });

      expect(response.status).toBe(200);
      expect(response.body.object).toBe('chat.completion');
    });

    it('should accept content as an array of text parts', async () => {
      const messages = [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'first part' },
            { type: 'text', text: 'second part here' },
          ],
        },
      ];

      const response = await chat({ model, messages });

      expect(response.status).toBe(200);
      expect(response.body.usage.prompt_tokens).toBe(countMockPromptTokens(messages));
    });

    it.each([
      ['an https image URL', 'https://example.com/cat.png'],
      ['an http image URL', 'http://example.com/images/cat.jpg?size=large'],
      ['a base64 data URI', PNG_DATA_URI],
    ])('should accept %s on a vision model', async (_name, url) => {
      const messages = [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this image?' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ];

      const { response, received } = await chatAndCapture({ model: visionModel, messages });

      expect(response.status).toBe(200);
      expect(response.body.usage.prompt_tokens).toBe(countMockPromptTokens(messages));
      expect((received[0].body as { messages: unknown }).messages).toEqual(messages);
    });

    it('should accept a JSON content type with a charset', async () => {
      const response = await gateway.raw(
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json; charset=utf-8' },
        JSON.stringify({ model, messages: userMessage() }),
      );

      expect(response.status).toBe(200);
      expect(response.body.object).toBe('chat.completion');
    });
  });

  describe('invalid requests (SPEC 7, 400)', () => {
    const rawBodyCases: [string, string][] = [
      ['a body that is not JSON', '{"model": "gpt", "messages": ['],
      ['a body that is plain text', 'hello'],
      ['a body that is a JSON array', '[{"role":"user","content":"hi"}]'],
      ['a body that is a JSON string', '"hello"'],
      ['a body that is JSON null', 'null'],
      ['a body that is a JSON number', '42'],
      ['an empty body', ''],
    ];

    it.each(rawBodyCases)('should answer 400 to %s, without calling the upstream', async (_name, body) => {
      const before = gateway.mock.requests.length;

      const response = await gateway.raw(
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
        body,
      );

      expectInvalidRequest(response, null);
      expect(gateway.mock.requests.length).toBe(before);
    });

    const messagesParam = expect.stringMatching(/^messages/);
    type Case = [string, () => Record<string, unknown>, unknown];
    const cases: Case[] = [
      ['a missing model', () => ({ messages: userMessage() }), 'model'],
      ['an empty model', () => ({ model: '', messages: userMessage() }), 'model'],
      ['a model that is not a string', () => ({ model: 42, messages: userMessage() }), 'model'],
      ['an unknown model', () => ({ model: `no-such-model-${randomUUID()}`, messages: userMessage() }), 'model'],
      [
        'the upstream name of a model instead of ours',
        () => ({ model: UPSTREAM_MODEL, messages: userMessage() }),
        'model',
      ],
      ['missing messages', () => ({ model }), 'messages'],
      ['empty messages', () => ({ model, messages: [] }), 'messages'],
      ['messages that are not an array', () => ({ model, messages: 'hello' }), 'messages'],
      ['messages that are an object', () => ({ model, messages: { role: 'user', content: 'hi' } }), 'messages'],
      ['a message that is not an object', () => ({ model, messages: ['hello'] }), messagesParam],
      [
        'a message with an unknown role',
        () => ({ model, messages: [{ role: 'wizard', content: 'hi' }] }),
        messagesParam,
      ],
      ['a message without a role', () => ({ model, messages: [{ content: 'hi' }] }), messagesParam],
      ['a message without content', () => ({ model, messages: [{ role: 'user' }] }), messagesParam],
      ['a message with null content', () => ({ model, messages: [{ role: 'user', content: null }] }), messagesParam],
      ['a message with numeric content', () => ({ model, messages: [{ role: 'user', content: 7 }] }), messagesParam],
      [
        'a message with an empty parts array',
        () => ({ model, messages: [{ role: 'user', content: [] }] }),
        messagesParam,
      ],
      [
        'a content part of an unknown type',
        () => ({ model, messages: [{ role: 'user', content: [{ type: 'video', video: 'x' }] }] }),
        messagesParam,
      ],
      [
        'a text part without text',
        () => ({ model, messages: [{ role: 'user', content: [{ type: 'text' }] }] }),
        messagesParam,
      ],
      [
        'a malformed second message',
        () => ({ model, messages: [{ role: 'user', content: 'hi' }, { role: 'user' }] }),
        messagesParam,
      ],
      ['temperature 2.5', () => ({ model, messages: userMessage(), temperature: 2.5 }), 'temperature'],
      ['temperature -1', () => ({ model, messages: userMessage(), temperature: -1 }), 'temperature'],
      ['temperature as a string', () => ({ model, messages: userMessage(), temperature: 'hot' }), 'temperature'],
      ['presence_penalty 2.5', () => ({ model, messages: userMessage(), presence_penalty: 2.5 }), 'presence_penalty'],
      ['presence_penalty -3', () => ({ model, messages: userMessage(), presence_penalty: -3 }), 'presence_penalty'],
      ['frequency_penalty 3', () => ({ model, messages: userMessage(), frequency_penalty: 3 }), 'frequency_penalty'],
      [
        'frequency_penalty -2.5',
        () => ({ model, messages: userMessage(), frequency_penalty: -2.5 }),
        'frequency_penalty',
      ],
      ['negative max_tokens', () => ({ model, messages: userMessage(), max_tokens: -1 }), 'max_tokens'],
      ['max_tokens that is not an integer', () => ({ model, messages: userMessage(), max_tokens: 1.5 }), 'max_tokens'],
      ['max_tokens as a string', () => ({ model, messages: userMessage(), max_tokens: '10' }), 'max_tokens'],
      [
        'max_tokens above the model maximum',
        () => ({ model, messages: userMessage(), max_tokens: 1001 }),
        'max_tokens',
      ],
      [
        'max_completion_tokens above the model maximum',
        () => ({ model, messages: userMessage(), max_completion_tokens: 100_000 }),
        'max_completion_tokens',
      ],
      ['n: 0', () => ({ model, messages: userMessage(), n: 0 }), 'n'],
      ['stream that is not a boolean', () => ({ model, messages: userMessage(), stream: 'yes' }), 'stream'],
      [
        'an image part on a non-vision model',
        () => ({
          model,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is this?' },
                { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
              ],
            },
          ],
        }),
        messagesParam,
      ],
    ];

    const badImageUrls: [string, unknown][] = [
      ['a relative path', '/images/cat.png'],
      ['plain text', 'not a url'],
      ['an ftp URL', 'ftp://example.com/cat.png'],
      ['a javascript: URL', 'javascript:alert(1)'],
      ['a data URI without base64', 'data:image/png,iVBORw0KGgo='],
      ['a data URI without a media type', 'data:;base64,iVBORw0KGgo='],
      ['a data URI with no data', 'data:image/png;base64,'],
      ['a data URI with invalid base64', 'data:image/png;base64,@@@not base64@@@'],
      ['an empty string', ''],
      ['a number', 42],
    ];
    for (const [name, url] of badImageUrls) {
      cases.push([
        `an image URL that is ${name}`,
        () => ({
          model: visionModel,
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
        }),
        messagesParam,
      ]);
    }
    cases.push([
      'an image part without image_url',
      () => ({ model: visionModel, messages: [{ role: 'user', content: [{ type: 'image_url' }] }] }),
      messagesParam,
    ]);

    it.each(cases)('should answer 400 to %s, without calling the upstream', async (_name, body, param) => {
      const before = gateway.mock.requests.length;

      const response = await chat(body());

      expectInvalidRequest(response, param);
      expect(gateway.mock.requests.length).toBe(before);
    });

    it('should name the unknown model in the 400 message', async () => {
      const response = await chat({ model: 'gpt-imaginary-9', messages: userMessage() });

      expectInvalidRequest(response, 'model');
      expect(response.body.error.message).toContain('gpt-imaginary-9');
    });

    it.each([
      ['text/plain', 'text/plain'],
      ['form-encoded', 'application/x-www-form-urlencoded'],
      ['multipart', 'multipart/form-data; boundary=x'],
    ])('should answer 400 to a %s content type, without calling the upstream', async (_name, contentType) => {
      const before = gateway.mock.requests.length;

      const response = await gateway.raw(
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${customer.key}`, 'content-type': contentType },
        JSON.stringify({ model, messages: userMessage() }),
      );

      expectInvalidRequest(response, null);
      expect(gateway.mock.requests.length).toBe(before);
    });

    it('should answer 400 to a body without a content type, without calling the upstream', async () => {
      const before = gateway.mock.requests.length;

      const response = await gateway.raw(
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${customer.key}` },
        JSON.stringify({ model, messages: userMessage() }),
      );

      expectInvalidRequest(response, null);
      expect(gateway.mock.requests.length).toBe(before);
    });

    it('should keep serving after a burst of invalid requests', async () => {
      await Promise.all(Array.from({ length: 20 }, () => chat({ model, messages: [] })));

      const response = await chat({ model, messages: userMessage() });

      expect(response.status).toBe(200);
    });
  });

  describe('relaying the request unchanged (SPEC 1.4)', () => {
    it('should send the upstream exactly the client’s fields, with only model replaced', async () => {
      const body = {
        model,
        messages: [
          { role: 'developer', content: 'Answer as JSON.' },
          { role: 'system', content: 'You are a weather bot.' },
          { role: 'user', content: [{ type: 'text', text: 'Weather in Zürich? 天気 🌦' }] },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Zürich"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Current weather for a city',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
        ],
        tool_choice: 'auto',
        parallel_tool_calls: false,
        response_format: { type: 'json_object' },
        seed: 42,
        logprobs: true,
        top_logprobs: 2,
        logit_bias: { '50256': -100 },
        temperature: 0.7,
        top_p: 0.9,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        max_tokens: 500,
        stop: ['END'],
        user: 'end-user-17',
        metadata: { purpose: 'test' },
        a_field_from_the_future: { nested: [1, 2.5, { deep: null }, 'x'] },
        mock: { reply: 'Sunny.' },
      };

      const { response, received } = await chatAndCapture(body);

      expect(response.status).toBe(200);
      expect(received).toHaveLength(1);
      expect(received[0].method).toBe('POST');
      expect(received[0].path).toBe('/v1/chat/completions');
      expect(received[0].headers['content-type']).toMatch(/^application\/json/);
      expect(received[0].body).toEqual({ ...body, model: UPSTREAM_MODEL });
    });

    it('should relay a minimal request without adding fields', async () => {
      const body = { model, messages: userMessage('Hi') };

      const { received } = await chatAndCapture(body);

      expect(received[0].body).toEqual({ model: UPSTREAM_MODEL, messages: userMessage('Hi') });
    });

    it('should authenticate to the upstream with the channel’s key, never the customer’s', async () => {
      const { response, received } = await chatAndCapture({ model, messages: userMessage() });

      expect(response.status).toBe(200);
      expect(received[0].headers.authorization).toBe(`Bearer ${CHANNEL_KEY}`);
    });

    it('should use each channel’s own key', async () => {
      const channelId = `ch-${randomUUID().slice(0, 8)}`;
      const channelKey = `other-channel-key-${randomUUID()}`;
      await gateway.addChannel(channelId, { baseUrl: `${gateway.mock.url}/v1`, apiKey: channelKey });
      const other = await gateway.addModel({ routes: [{ channelId, upstreamModel: 'mock-gpt' }] });

      const { response, received } = await chatAndCapture({ model: other, messages: userMessage() });

      expect(response.status).toBe(200);
      expect(received[0].headers.authorization).toBe(`Bearer ${channelKey}`);
    });

    it('should not pass the customer’s key to the upstream in any form', async () => {
      const before = gateway.mock.requests.length;
      await gateway.chat(customer.key, { model, messages: userMessage() });
      await gateway.chat(customer.key, { model, messages: userMessage(), stream: true });
      const received = gateway.mock.requests.slice(before);

      expect(received).toHaveLength(2);
      const keyBody = customer.key.slice(3);
      for (const request of received) {
        const seen = JSON.stringify(request.headers) + request.rawBody + request.path;
        expect(seen).not.toContain(keyBody);
      }
    });
  });
});
