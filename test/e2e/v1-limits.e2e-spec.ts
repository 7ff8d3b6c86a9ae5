import { Customer, TestGateway } from 'test/support/gateway';
import { expectApiError, userMessage } from 'test/e2e/v1-helpers';

/** The limits (docs/errors.md): per-account requests- and tokens-per-minute limits, and the balance rule. */
describe('/v1 limits (SPEC 7 and 8)', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await TestGateway.start();
  });
  afterAll(() => gateway.close());

  const expectRateLimited = (response: Awaited<ReturnType<TestGateway['chat']>>) =>
    expectApiError(response, 429, { type: 'requests', code: 'rate_limit_exceeded', param: null });

  describe('requests per minute', () => {
    it('should answer 429 rate_limit_exceeded once an account passes the model’s RPM', async () => {
      const model = await gateway.addModel({ rpm: 3 });
      const customer = await gateway.newCustomer({ balance: '10' });

      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await gateway.chat(customer.key, { model, messages: userMessage() })).status);
      }
      const limited = await gateway.chat(customer.key, { model, messages: userMessage() });

      expect(statuses).toEqual([200, 200, 200]);
      expectRateLimited(limited);
    });

    it('should name the model, the limit and the usage in the 429 message', async () => {
      const model = await gateway.addModel({ rpm: 2 });
      const customer = await gateway.newCustomer({ balance: '10' });
      await gateway.chat(customer.key, { model, messages: userMessage() });
      await gateway.chat(customer.key, { model, messages: userMessage() });

      const limited = await gateway.chat(customer.key, { model, messages: userMessage() });

      expectRateLimited(limited);
      expect(limited.body.error.message).toContain(model);
      expect(limited.body.error.message).toMatch(/\b2\b/);
    });

    it('should not count a request refused as invalid (400) against requests per minute', async () => {
      const model = await gateway.addModel({ rpm: 2 });
      const customer = await gateway.newCustomer({ balance: '10' });

      const invalid = await gateway.chat(customer.key, { model, messages: userMessage(), temperature: 9 });
      const served = [
        await gateway.chat(customer.key, { model, messages: userMessage() }),
        await gateway.chat(customer.key, { model, messages: userMessage() }),
      ];
      const limited = await gateway.chat(customer.key, { model, messages: userMessage() });

      expectApiError(invalid, 400, { type: 'invalid_request_error', code: null, param: 'temperature' });
      expect(served.map((response) => response.status)).toEqual([200, 200]);
      expect(served[1].headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expectRateLimited(limited);
      expect(limited.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    });

    it('should not call the upstream for a rate-limited request', async () => {
      const model = await gateway.addModel({ rpm: 1 });
      const customer = await gateway.newCustomer({ balance: '10' });
      await gateway.chat(customer.key, { model, messages: userMessage() });
      const before = gateway.mock.requests.length;

      expectRateLimited(await gateway.chat(customer.key, { model, messages: userMessage() }));

      expect(gateway.mock.requests.length).toBe(before);
    });

    it('should count per account: another account is still served', async () => {
      const model = await gateway.addModel({ rpm: 1 });
      const first = await gateway.newCustomer({ balance: '10' });
      const second = await gateway.newCustomer({ balance: '10' });
      await gateway.chat(first.key, { model, messages: userMessage() });

      expectRateLimited(await gateway.chat(first.key, { model, messages: userMessage() }));
      expect((await gateway.chat(second.key, { model, messages: userMessage() })).status).toBe(200);
    });

    it('should count per model: the same account is still served on another model', async () => {
      const limitedModel = await gateway.addModel({ rpm: 1 });
      const otherModel = await gateway.addModel({ rpm: 100 });
      const customer = await gateway.newCustomer({ balance: '10' });
      await gateway.chat(customer.key, { model: limitedModel, messages: userMessage() });

      expectRateLimited(await gateway.chat(customer.key, { model: limitedModel, messages: userMessage() }));
      expect((await gateway.chat(customer.key, { model: otherModel, messages: userMessage() })).status).toBe(200);
    });

    it('should answer a streaming request over the limit with a JSON 429', async () => {
      const model = await gateway.addModel({ rpm: 1 });
      const customer = await gateway.newCustomer({ balance: '10' });
      await gateway.chat(customer.key, { model, messages: userMessage(), stream: true });

      expectRateLimited(await gateway.chat(customer.key, { model, messages: userMessage(), stream: true }));
    });
  });

  describe('tokens per minute', () => {
    it('should answer 429 rate_limit_exceeded once an account passes the model’s TPM', async () => {
      const model = await gateway.addModel({ tpm: 60 });
      const customer = await gateway.newCustomer({ balance: '10' });
      const prompt = 'one two three four five six seven eight nine ten';

      const responses = [];
      for (let i = 0; i < 8; i++) {
        responses.push(await gateway.chat(customer.key, { model, messages: userMessage(prompt), max_tokens: 10 }));
      }

      // Each request is about 16 prompt tokens and 5 completion tokens: 8 of them are far above 60 a minute.
      expect(responses[0].status).toBe(200);
      const limited = responses.find((response) => response.status !== 200);
      expect(limited).toBeDefined();
      expectRateLimited(limited!);
    });
  });

  describe('balance', () => {
    it('should answer 403 to a chat request from an account with no balance, without calling the upstream', async () => {
      const model = await gateway.addModel();
      const customer: Customer = await gateway.newCustomer({ balance: '0' });
      const before = gateway.mock.requests.length;

      const response = await gateway.chat(customer.key, { model, messages: userMessage() });

      expect(response.status).toBe(403);
      expect(response.body.error).toEqual(
        expect.objectContaining({ type: 'invalid_request_error', param: null, message: expect.any(String) }),
      );
      expect(response.body.error.code).not.toBe('api_key_disabled');
      expect(gateway.mock.requests.length).toBe(before);
    });

    it('should still list the models for an account with no balance', async () => {
      const customer = await gateway.newCustomer({ balance: '0' });

      const response = await gateway.call('GET', '/v1/models', { token: customer.key });

      expect(response.status).toBe(200);
      expect(response.body.object).toBe('list');
    });

    it('should serve the same account once it has been credited', async () => {
      const model = await gateway.addModel();
      const customer = await gateway.newCustomer({ balance: '0' });
      expect((await gateway.chat(customer.key, { model, messages: userMessage() })).status).toBe(403);

      const credited = await gateway.admin('POST', `/admin/accounts/${customer.accountId}/adjustments`, {
        amount: '5',
        reason: 'test credit',
      });
      expect(credited.status).toBe(201);

      // A top-up may take a moment to reach the admission check.
      const deadline = Date.now() + 3000;
      let response = await gateway.chat(customer.key, { model, messages: userMessage() });
      while (response.status === 403 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        response = await gateway.chat(customer.key, { model, messages: userMessage() });
      }
      expect(response.status).toBe(200);
    });
  });
});
