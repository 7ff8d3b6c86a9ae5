import { randomUUID } from 'node:crypto';
import { Customer, TestGateway } from 'test/support/gateway';
import { expectApiError, expectInvalidApiKey, expectInvalidRequest, userMessage } from 'test/e2e/v1-helpers';

const channelId = () => `ch-${randomUUID().slice(0, 8)}`;

describe('GET /v1/models', () => {
  let gateway: TestGateway;
  let customer: Customer;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    customer = await gateway.newCustomer({ balance: '10' });
  });
  afterAll(() => gateway.close());

  const listIds = async (): Promise<string[]> => {
    const response = await gateway.call('GET', '/v1/models', { token: customer.key });
    expect(response.status).toBe(200);
    return response.body.data.map((entry: { id: string }) => entry.id);
  };

  it('should answer a list of model objects', async () => {
    const model = await gateway.addModel();

    const response = await gateway.call('GET', '/v1/models', { token: customer.key });

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual({ object: 'list', data: expect.any(Array) });
    expect(response.body.data.length).toBeGreaterThan(0);
    for (const entry of response.body.data) {
      expect(entry).toEqual({
        id: expect.any(String),
        object: 'model',
        created: expect.any(Number),
        owned_by: expect.any(String),
      });
      expect(Number.isInteger(entry.created)).toBe(true);
    }
    const listed = response.body.data.find((entry: { id: string }) => entry.id === model);
    expect(listed).toBeDefined();
    // created is in seconds, not milliseconds
    expect(Math.abs(listed.created - Date.now() / 1000)).toBeLessThan(3600);
  });

  it('should list each model once, even with several routes', async () => {
    const first = channelId();
    const second = channelId();
    await gateway.addChannel(first, { baseUrl: `${gateway.mock.url}/v1` });
    await gateway.addChannel(second, { baseUrl: `${gateway.mock.url}/v1` });
    const model = await gateway.addModel({
      routes: [
        { channelId: first, upstreamModel: 'mock-gpt' },
        { channelId: second, upstreamModel: 'mock-gpt-mini' },
      ],
    });

    const ids = await listIds();

    expect(ids.filter((id) => id === model)).toHaveLength(1);
    expect(ids).not.toContain('mock-gpt-mini');
  });

  it('should not list a disabled model, and should reject chat requests for it', async () => {
    const model = await gateway.addModel({ enabled: false });

    expect(await listIds()).not.toContain(model);
    expectInvalidRequest(await gateway.chat(customer.key, { model, messages: userMessage() }), 'model');
  });

  it('should not list a model whose only channel is disabled', async () => {
    const channel = channelId();
    await gateway.addChannel(channel, { baseUrl: `${gateway.mock.url}/v1`, enabled: false });
    const model = await gateway.addModel({ routes: [{ channelId: channel, upstreamModel: 'mock-gpt' }] });

    expect(await listIds()).not.toContain(model);
    expectInvalidRequest(await gateway.chat(customer.key, { model, messages: userMessage() }), 'model');
  });

  it('should list a model as long as one of its channels is enabled', async () => {
    const disabled = channelId();
    const enabled = channelId();
    await gateway.addChannel(disabled, { baseUrl: `${gateway.mock.url}/v1`, enabled: false });
    await gateway.addChannel(enabled, { baseUrl: `${gateway.mock.url}/v1` });
    const model = await gateway.addModel({
      routes: [
        { channelId: disabled, upstreamModel: 'mock-gpt' },
        { channelId: enabled, upstreamModel: 'mock-gpt' },
      ],
    });

    expect(await listIds()).toContain(model);
  });

  it('should drop a model from the list soon after an operator disables it', async () => {
    const model = await gateway.addModel();
    expect(await listIds()).toContain(model);

    const disabled = await gateway.admin('PUT', `/admin/models/${model}`, {
      inputPrice: '2.5',
      outputPrice: '10',
      maxOutputTokens: 1000,
      vision: false,
      rpm: 1000,
      tpm: 10_000_000,
      enabled: false,
      routes: [],
    });
    expect(disabled.status).toBe(200);

    const deadline = Date.now() + 3000;
    let ids = await listIds();
    while (ids.includes(model) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ids = await listIds();
    }
    expect(ids).not.toContain(model);
  });

  it('should drop a model from the list soon after an operator disables its only channel', async () => {
    const channel = channelId();
    await gateway.addChannel(channel, { baseUrl: `${gateway.mock.url}/v1` });
    const model = await gateway.addModel({ routes: [{ channelId: channel, upstreamModel: 'mock-gpt' }] });
    expect(await listIds()).toContain(model);

    await gateway.addChannel(channel, { baseUrl: `${gateway.mock.url}/v1`, enabled: false });

    const deadline = Date.now() + 3000;
    let ids = await listIds();
    while (ids.includes(model) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ids = await listIds();
    }
    expect(ids).not.toContain(model);
  });
});

describe('GET /v1/models/{model}', () => {
  let gateway: TestGateway;
  let customer: Customer;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    customer = await gateway.newCustomer({ balance: '10' });
  });
  afterAll(() => gateway.close());

  const retrieve = (id: string, key = customer.key) =>
    gateway.call('GET', `/v1/models/${encodeURIComponent(id)}`, { token: key });
  const expectModelNotFound = (response: Awaited<ReturnType<typeof retrieve>>) =>
    expectApiError(response, 404, { type: 'invalid_request_error', code: 'model_not_found', param: 'model' });

  it('should answer the same object as the model’s entry in the list', async () => {
    const model = await gateway.addModel();

    const response = await retrieve(model);

    expect(response.status).toBe(200);
    const list = await gateway.call('GET', '/v1/models', { token: customer.key });
    expect(response.body).toEqual(list.body.data.find((entry: { id: string }) => entry.id === model));
    expect(response.body).toEqual({ id: model, object: 'model', created: expect.any(Number), owned_by: 'openai' });
  });

  it('should find a model whose id holds a slash', async () => {
    const model = await gateway.addModel({ id: `vendor/model-${randomUUID().slice(0, 8)}` });

    const response = await retrieve(model);

    expect(response.status).toBe(200);
    expect(response.body.id).toBe(model);
  });

  it('should answer 404 model_not_found for an unknown model', async () => {
    expectModelNotFound(await retrieve('no-such-model'));
  });

  it('should answer 404 model_not_found for a disabled model', async () => {
    const model = await gateway.addModel({ enabled: false });

    expectModelNotFound(await retrieve(model));
  });

  it('should answer 401 without a valid key', async () => {
    const model = await gateway.addModel();

    expectInvalidApiKey(await retrieve(model, 'sk-unknownkey0123456789'));
  });
});
