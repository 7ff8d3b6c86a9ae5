import Anthropic, {
  AuthenticationError,
  BadRequestError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import { Books } from 'test/e2e/billing-helpers';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';

const UPSTREAM_MODEL = 'claude-upstream-model';
const CHANNEL_KEY = 'anthropic-channel-key-0000';
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const READ_TOOL: Anthropic.Tool = {
  name: 'read_file',
  description: 'Reads a file of the project',
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};
const SYSTEM = 'You are a coding assistant.';
const ASKING: Anthropic.MessageParam[] = [{ role: 'user', content: 'Read the README and sum it up' }];

/**
 * POST /v1/messages/count_tokens, as Claude Code calls it through `@anthropic-ai/sdk`: Anthropic's own
 * count on an Anthropic channel (asked with the channel's key), the gateway's own elsewhere; never
 * billed, limited per key, under the key's controls, and every error in Anthropic's shape.
 */
describe("Anthropic's token count (POST /v1/messages/count_tokens)", () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let claude: string;
  let translated: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    worker = await TestWorker.start();
    books = await Books.open(gateway);
    await gateway.addChannel('count-anthropic', {
      type: 'anthropic',
      baseUrl: `${gateway.mock.url}/v1`,
      apiKey: CHANNEL_KEY,
    });
    claude = await gateway.addModel({
      maxOutputTokens: 4096,
      vision: true,
      routes: [{ channelId: 'count-anthropic', upstreamModel: UPSTREAM_MODEL }],
    });
    translated = await gateway.addModel({ maxOutputTokens: 4096, vision: true });
  });
  afterAll(async () => {
    await books.close();
    await worker.close();
    await gateway.close();
  });

  const clientOf = (customer: Customer) => new Anthropic({ apiKey: customer.key, baseURL: gateway.url, maxRetries: 0 });
  const countRequests = () => gateway.mock.requests.filter((request) => request.path.endsWith('/count_tokens'));

  it("should ask an Anthropic channel's own count with the channel's key, and bill nothing", async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);
    const asked = countRequests().length;

    const counted = await clientOf(customer).messages.countTokens({
      model: claude,
      system: SYSTEM,
      messages: ASKING,
      tools: [READ_TOOL],
    });

    const sent = countRequests().slice(asked);
    expect(sent).toHaveLength(1);
    expect(sent[0].path).toBe('/v1/messages/count_tokens');
    // The SDK's own anthropic-version goes on, as on /v1/messages.
    expect(sent[0].headers).toMatchObject({
      'x-api-key': CHANNEL_KEY,
      'anthropic-version': expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
    expect(sent[0].body).toEqual({ model: UPSTREAM_MODEL, system: SYSTEM, messages: ASKING, tools: [READ_TOOL] });
    // The mock counts one token a word, 3 a turn, 3 for the system text and 3 for the request.
    expect(counted).toEqual({ input_tokens: 3 + (3 + 5) + (3 + 7) });
    expect(await books.balance(customer)).toBe(before);
    expect(await books.bills(customer)).toEqual([]);
    expect(await books.usageRecordsOf(customer.accountId)).toEqual([]);
  });

  it('should take a Bearer key as well as x-api-key', async () => {
    const customer = await gateway.newCustomer();
    const client = new Anthropic({ apiKey: null, authToken: customer.key, baseURL: gateway.url, maxRetries: 0 });

    const counted = await client.messages.countTokens({ model: claude, messages: ASKING });

    expect(counted).toEqual({ input_tokens: 3 + (3 + 7) });
  });

  it("should count a model on other channels with the gateway's own count: system, tools and images included", async () => {
    const customer = await gateway.newCustomer();
    const client = clientOf(customer);
    const asked = countRequests().length;
    const requestsBefore = gateway.mock.requests.length;

    const bare = await client.messages.countTokens({ model: translated, messages: ASKING });
    const withSystem = await client.messages.countTokens({ model: translated, system: SYSTEM, messages: ASKING });
    const withTools = await client.messages.countTokens({
      model: translated,
      system: SYSTEM,
      messages: ASKING,
      tools: [READ_TOOL],
    });
    const image = {
      type: 'image' as const,
      source: { type: 'base64' as const, media_type: 'image/png' as const, data: PIXEL_PNG },
    };
    const withImage = await client.messages.countTokens({
      model: translated,
      messages: [{ role: 'user', content: [image, { type: 'text', text: 'What is this?' }] }],
    });

    expect(bare.input_tokens).toBeGreaterThan(3 + (3 + 7));
    expect(withSystem.input_tokens).toBeGreaterThan(bare.input_tokens);
    expect(withTools.input_tokens).toBeGreaterThan(withSystem.input_tokens);
    expect(withImage.input_tokens).toBeGreaterThan(bare.input_tokens);
    // No upstream was asked: the count is the gateway's.
    expect(countRequests()).toHaveLength(asked);
    expect(gateway.mock.requests).toHaveLength(requestsBefore);
  });

  it("should count by the gateway's own count when the Anthropic channel cannot answer", async () => {
    // Nothing listens on port 1: the count cannot be asked there.
    await gateway.addChannel('count-anthropic-down', { type: 'anthropic', baseUrl: 'http://127.0.0.1:1/v1' });
    const down = await gateway.addModel({
      routes: [{ channelId: 'count-anthropic-down', upstreamModel: UPSTREAM_MODEL }],
    });
    const client = clientOf(await gateway.newCustomer());

    const counted = await client.messages.countTokens({ model: down, messages: ASKING });
    const own = await client.messages.countTokens({ model: translated, messages: ASKING });

    expect(counted).toEqual(own);
  });

  it("should refuse in Anthropic's shape: a bad key, a bad body, a model the key may not use", async () => {
    const customer = await gateway.newCustomer();
    const badKey = new Anthropic({ apiKey: 'sk-not-a-key', baseURL: gateway.url, maxRetries: 0 });
    await expect(badKey.messages.countTokens({ model: claude, messages: ASKING })).rejects.toBeInstanceOf(
      AuthenticationError,
    );

    const noMessages = await gateway.raw(
      'POST',
      '/v1/messages/count_tokens',
      { 'x-api-key': customer.key, 'content-type': 'application/json' },
      JSON.stringify({ model: claude }),
    );
    expect(noMessages.status).toBe(400);
    expect(JSON.parse(noMessages.text)).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/^messages: /) },
    });
    await expect(
      clientOf(customer).messages.countTokens({ model: 'no-such-model', messages: ASKING }),
    ).rejects.toBeInstanceOf(BadRequestError);

    const patched = await gateway.call('PATCH', `/console/keys/${customer.keyId}`, {
      token: customer.token,
      body: { allowedModels: [translated] },
    });
    expect(patched.status).toBe(200);
    const refused = clientOf(customer).messages.countTokens({ model: claude, messages: ASKING });
    await expect(refused).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(refused).rejects.toMatchObject({ error: { error: { type: 'permission_error' } } });
  });

  it("should answer an unknown /v1/messages path in Anthropic's shape, taking x-api-key", async () => {
    const customer = await gateway.newCustomer();
    for (const [method, path] of [
      ['POST', '/v1/messages/batches'],
      ['GET', '/v1/messages'],
      ['GET', '/v1/messages/count_tokens'],
    ]) {
      const answer = await gateway.raw(method, path, { 'x-api-key': customer.key });

      expect({ path, status: answer.status, body: JSON.parse(answer.text) }).toEqual({
        path,
        status: 404,
        body: { type: 'error', error: { type: 'not_found_error', message: expect.any(String) } },
      });
    }
    const badKey = await gateway.raw('POST', '/v1/messages/batches', { 'x-api-key': 'sk-not-a-key' });
    expect(badKey.status).toBe(401);
    expect(JSON.parse(badKey.text).error.type).toBe('authentication_error');
    const client = clientOf(customer);
    await expect(client.get('/v1/messages/unknown')).rejects.toBeInstanceOf(NotFoundError);
  });

  it("should limit counts per key at the model's requests per minute, apart from its messages", async () => {
    const limited = await gateway.addModel({
      rpm: 2,
      routes: [{ channelId: 'count-anthropic', upstreamModel: UPSTREAM_MODEL }],
    });
    const customer = await gateway.newCustomer();
    const client = clientOf(customer);

    await client.messages.countTokens({ model: limited, messages: ASKING });
    await client.messages.countTokens({ model: limited, messages: ASKING });
    const refused = client.messages.countTokens({ model: limited, messages: ASKING });

    await expect(refused).rejects.toBeInstanceOf(RateLimitError);
    await expect(refused).rejects.toMatchObject({
      error: { error: { type: 'rate_limit_error', message: expect.stringContaining('token counts per minute') } },
    });
    // Another key of the same account has a window of its own, and the messages' window is untouched.
    const other = await gateway.call('POST', '/console/keys', { token: customer.token, body: { name: 'second' } });
    const otherClient = new Anthropic({ apiKey: other.body.key, baseURL: gateway.url, maxRetries: 0 });
    await expect(otherClient.messages.countTokens({ model: limited, messages: ASKING })).resolves.toBeDefined();
    await expect(client.messages.create({ model: limited, max_tokens: 50, messages: ASKING })).resolves.toMatchObject({
      type: 'message',
    });
  });

  it('should serve a Claude-Code-like turn: count, then a streamed message with tools, counted as billed', async () => {
    const customer = await gateway.newCustomer();
    const client = clientOf(customer);
    const request = { model: claude, system: SYSTEM, messages: ASKING, tools: [READ_TOOL] };

    const counted = await client.messages.countTokens(request);
    const stream = client.messages.stream({ ...request, max_tokens: 1024, tool_choice: { type: 'any' } });
    const final = await stream.finalMessage();

    expect(final.stop_reason).toBe('tool_use');
    const toolUse = final.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'read_file', input: { path: expect.any(String) } });
    expect(final.usage.input_tokens).toBe(counted.input_tokens);

    const next: Anthropic.MessageParam[] = [
      ...ASKING,
      { role: 'assistant', content: final.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse!.id, content: '# Gateway' }] },
    ];
    const recounted = await client.messages.countTokens({ ...request, messages: next });
    expect(recounted.input_tokens).toBeGreaterThan(counted.input_tokens);
    const bills = await books.waitForBills(customer, 1);
    expect(bills).toHaveLength(1);
    expect(bills[0].promptTokens).toBe(counted.input_tokens);
  });
});
