import OpenAI, { APIError } from 'openai';
import { countMockPromptTokens } from 'tools/mock-upstream/mock-upstream.server';
import { Customer, TestGateway } from 'test/support/gateway';

const MOCK_REPLY = 'Hello from the mock upstream.';

/**
 * Clients written for the wire format work after changing only the base address and the
 * key. Proven with the official `openai` npm client.
 */
describe('the official openai client against the gateway', () => {
  let gateway: TestGateway;
  let customer: Customer;
  let model: string;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    model = await gateway.addModel({ maxOutputTokens: 1000 });
    customer = await gateway.newCustomer({ balance: '10' });
    client = clientWith(customer.key);
  });
  afterAll(() => gateway.close());

  const clientWith = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });

  /** The error the client throws for `promise`; fails the test if it resolves. */
  async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    throw new Error('expected the request to fail');
  }

  it('should list the models with models.list()', async () => {
    const page = await client.models.list();

    const ids = page.data.map((entry) => entry.id);
    expect(ids).toContain(model);
    const listed = page.data.find((entry) => entry.id === model)!;
    expect(listed).toMatchObject({ object: 'model', owned_by: expect.any(String) });
    expect(Number.isInteger(listed.created)).toBe(true);
  });

  it('should retrieve one model with models.retrieve()', async () => {
    const retrieved = await client.models.retrieve(model);

    expect(retrieved).toMatchObject({ id: model, object: 'model', owned_by: 'openai' });
    const listed = (await client.models.list()).data.find((entry) => entry.id === model);
    expect(retrieved).toEqual(listed);
  });

  it('should throw NotFoundError with code model_not_found from models.retrieve() for an unknown model', async () => {
    const error = await rejectionOf(client.models.retrieve('no-such-model'));

    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
  });

  it('should get a completion with chat.completions.create', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello' },
    ];

    const completion = await client.chat.completions.create({ model, messages });

    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe(model);
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]).toMatchObject({
      index: 0,
      message: { role: 'assistant', content: MOCK_REPLY },
      finish_reason: 'stop',
    });
    const promptTokens = countMockPromptTokens(messages);
    expect(completion.usage).toMatchObject({
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      total_tokens: promptTokens + 5,
    });
  });

  it('should expose the x-request-id through withResponse()', async () => {
    const { data, response, request_id } = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();

    expect(data.object).toBe('chat.completion');
    expect(response.headers.get('x-request-id')).toEqual(expect.stringMatching(/\S/));
    expect(request_id).toBe(response.headers.get('x-request-id'));
  });

  it('should honour max_tokens and n through the client', async () => {
    const completion = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
      n: 2,
    });

    expect(completion.choices.map((choice) => [choice.index, choice.finish_reason])).toEqual([
      [0, 'length'],
      [1, 'length'],
    ]);
  });

  it('should stream a completion the client can iterate', async () => {
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
    });

    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
    }

    expect(chunks.length).toBeGreaterThan(2);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === model)).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(MOCK_REPLY);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
  });

  it('should report usage at the end of a stream with stream_options.include_usage', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Count my tokens please' }];
    const stream = await client.chat.completions.create({
      model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });

    let content = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }

    expect(content).toBe(MOCK_REPLY);
    const promptTokens = countMockPromptTokens(messages);
    expect(usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5 });
  });

  it('should assemble a streamed completion with the client’s stream helper', async () => {
    const runner = client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'Say hello' }] });

    const completion = await runner.finalChatCompletion();

    expect(completion.model).toBe(model);
    expect(completion.choices[0].message.content).toBe(MOCK_REPLY);
    expect(completion.choices[0].finish_reason).toBe('stop');
  });

  it('should make a stream the upstream breaks fail in the client', async () => {
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      // not part of the client's types: the mock upstream's switch, relayed unchanged
      ...({ mock: { break_after: 2 } } as object),
    });

    const error = await rejectionOf(
      (async () => {
        for await (const _chunk of stream) {
          // drain
        }
      })(),
    );

    expect(error).toBeInstanceOf(APIError);
  });

  describe('errors surface as the client’s typed errors', () => {
    it('should throw AuthenticationError (401) for an unknown key', async () => {
      const error = await rejectionOf(clientWith('sk-unknownkey0123456789').models.list());

      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(error).toMatchObject({ status: 401, code: 'invalid_api_key', type: 'invalid_request_error' });
    });

    it('should throw AuthenticationError (401) on chat for a key without the sk- prefix', async () => {
      const error = await rejectionOf(
        clientWith('not-a-key').chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }),
      );

      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((error as APIError).status).toBe(401);
    });

    it('should throw BadRequestError with param "model" for an unknown model', async () => {
      const error = await rejectionOf(
        client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
      );

      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'model', code: null, type: 'invalid_request_error' });
      expect((error as APIError).requestID).toEqual(expect.stringMatching(/\S/));
    });

    it('should throw BadRequestError with param "temperature" for temperature 2.5', async () => {
      const error = await rejectionOf(
        client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], temperature: 2.5 }),
      );

      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'temperature' });
    });

    it('should throw BadRequestError for a streaming request with an unknown model', async () => {
      const error = await rejectionOf(
        client.chat.completions.create({
          model: 'no-such-model',
          messages: [{ role: 'user', content: 'hi' }],
          stream: true,
        }),
      );

      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'model' });
    });

    it('should throw PermissionDeniedError (403) for a disabled key', async () => {
      const owner = await gateway.newCustomer({ balance: '10' });
      const disabled = await gateway.call('PATCH', `/console/keys/${owner.keyId}`, {
        token: owner.token,
        body: { status: 'disabled' },
      });
      expect(disabled.status).toBe(200);

      const error = await rejectionOf(
        clientWith(owner.key).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }),
      );

      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(error).toMatchObject({ status: 403, code: 'api_key_disabled' });
    });

    it('should throw InternalServerError (500) when the upstream fails', async () => {
      const error = await rejectionOf(
        client.chat.completions.create({
          model,
          messages: [{ role: 'user', content: 'hi' }],
          ...({ mock: { status: 500 } } as object),
        }),
      );

      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error).toMatchObject({ status: 500, type: 'server_error' });
    });
  });
});
