import { randomBytes } from 'node:crypto';
import { Customer, HttpResult, TestGateway } from 'test/support/gateway';
import { expectApiError, expectInvalidApiKey, expectInvalidRequest, userMessage } from 'test/e2e/v1-helpers';

/** A well-formed key that no account holds. */
const unknownKey = () =>
  `sk-${randomBytes(36)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, 'x')}`;

describe('/v1 authentication (SPEC 5)', () => {
  let gateway: TestGateway;
  let model: string;
  let customer: Customer;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    model = await gateway.addModel();
    customer = await gateway.newCustomer({ balance: '10' });
  });
  afterAll(() => gateway.close());

  const chatBody = () => JSON.stringify({ model, messages: userMessage() });

  /** GET /v1/models and POST /v1/chat/completions with the Authorization header sent byte for byte. */
  async function bothEndpoints(authorization: string | undefined): Promise<HttpResult[]> {
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    return [
      await gateway.raw('GET', '/v1/models', headers),
      await gateway.raw('POST', '/v1/chat/completions', { ...headers, 'content-type': 'application/json' }, chatBody()),
    ];
  }

  describe('a valid key', () => {
    it('should list the models', async () => {
      const response = await gateway.call('GET', '/v1/models', { token: customer.key });

      expect(response.status).toBe(200);
      expect(response.body.data.map((entry: { id: string }) => entry.id)).toContain(model);
    });

    it('should get a chat completion', async () => {
      const response = await gateway.chat(customer.key, { model, messages: userMessage() });

      expect(response.status).toBe(200);
      expect(response.body.object).toBe('chat.completion');
    });

    it('should work on every model with the same key and base address', async () => {
      const other = await gateway.addModel();

      for (const id of [model, other]) {
        const response = await gateway.chat(customer.key, { model: id, messages: userMessage() });
        expect(response.status).toBe(200);
        expect(response.body.model).toBe(id);
      }
    });

    it('should be accepted when sent byte for byte as "Bearer <key>"', async () => {
      const responses = await bothEndpoints(`Bearer ${customer.key}`);

      expect(responses.map((response) => response.status)).toEqual([200, 200]);
    });
  });

  describe('a missing or malformed Authorization header', () => {
    const cases: [string, (key: string) => string | undefined][] = [
      ['no Authorization header', () => undefined],
      ['an empty Authorization header', () => ''],
      ['the key without "Bearer"', (key) => key],
      ['"Bearer" with no key', () => 'Bearer '],
      ['a lowercase "bearer"', (key) => `bearer ${key}`],
      ['an uppercase "BEARER"', (key) => `BEARER ${key}`],
      ['a doubled space after "Bearer"', (key) => `Bearer  ${key}`],
      ['a tab instead of the space', (key) => `Bearer\t${key}`],
      ['leading whitespace in the key', (key) => `Bearer \t${key}`],
      ['trailing (no-break) whitespace in the key', (key) => `Bearer ${key}\u00a0`],
      ['whitespace inside the key', (key) => `Bearer ${key.slice(0, 10)} ${key.slice(10)}`],
      ['a "Basic" scheme', (key) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`],
      ['a token that does not begin with sk-', (key) => `Bearer ${key.slice(3)}`],
      ['a bare "sk-"', () => 'Bearer sk-'],
    ];

    it.each(cases)('should answer 401 invalid_api_key to %s', async (_name, header) => {
      const before = gateway.mock.requests.length;

      const responses = await bothEndpoints(header(customer.key));

      for (const response of responses) {
        expectInvalidApiKey(response);
      }
      expect(gateway.mock.requests.length).toBe(before);
    });
  });

  describe('a key the service does not know', () => {
    it('should answer 401 invalid_api_key to an unknown sk- key', async () => {
      for (const response of await bothEndpoints(`Bearer ${unknownKey()}`)) {
        expectInvalidApiKey(response);
      }
    });

    it('should answer 401 invalid_api_key to a key that differs from a real one in its last character', async () => {
      const last = customer.key.at(-1) === 'a' ? 'b' : 'a';
      const forged = customer.key.slice(0, -1) + last;

      for (const response of await bothEndpoints(`Bearer ${forged}`)) {
        expectInvalidApiKey(response);
      }
    });

    it('should answer 401 invalid_api_key to a console access token used as an API key', async () => {
      for (const response of await bothEndpoints(`Bearer ${customer.token}`)) {
        expectInvalidApiKey(response);
      }
    });

    it('should not reveal whether the key exists in the 401 message', async () => {
      const [unknown] = await bothEndpoints(`Bearer ${unknownKey()}`);
      const deletedCustomer = await gateway.newCustomer({ balance: '1' });
      await gateway.call('DELETE', `/console/keys/${deletedCustomer.keyId}`, { token: deletedCustomer.token });
      const [deleted] = await bothEndpoints(`Bearer ${deletedCustomer.key}`);

      expectInvalidApiKey(unknown);
      expectInvalidApiKey(deleted);
      expect(deleted.body.error.message).toBe(unknown.body.error.message);
      expect(deleted.text).not.toContain(deletedCustomer.key);
    });
  });

  describe('key status (SPEC 3.2)', () => {
    async function setStatus(owner: Customer, status: 'enabled' | 'disabled') {
      const response = await gateway.call('PATCH', `/console/keys/${owner.keyId}`, {
        token: owner.token,
        body: { status },
      });
      expect(response.status).toBe(200);
      expect(response.body.status).toBe(status);
    }

    it('should answer 403 api_key_disabled to a key disabled in the console, at once', async () => {
      const owner = await gateway.newCustomer({ balance: '10' });
      // Used once first, so any cached copy of the key is the enabled one.
      expect((await gateway.chat(owner.key, { model, messages: userMessage() })).status).toBe(200);
      const before = gateway.mock.requests.length;

      await setStatus(owner, 'disabled');
      const responses = await bothEndpoints(`Bearer ${owner.key}`);

      for (const response of responses) {
        expectApiError(response, 403, { type: 'invalid_request_error', code: 'api_key_disabled', param: null });
      }
      expect(gateway.mock.requests.length).toBe(before);
    });

    it('should serve a disabled key again once it is re-enabled', async () => {
      const owner = await gateway.newCustomer({ balance: '10' });
      await setStatus(owner, 'disabled');
      expect((await gateway.chat(owner.key, { model, messages: userMessage() })).status).toBe(403);

      await setStatus(owner, 'enabled');
      const response = await gateway.chat(owner.key, { model, messages: userMessage() });

      expect(response.status).toBe(200);
    });

    it('should keep serving the account’s other keys when one key is disabled', async () => {
      const owner = await gateway.newCustomer({ balance: '10' });
      const second = await gateway.call('POST', '/console/keys', { token: owner.token, body: { name: 'second' } });
      expect(second.status).toBe(201);

      await setStatus(owner, 'disabled');

      expect((await gateway.chat(owner.key, { model, messages: userMessage() })).status).toBe(403);
      expect((await gateway.chat(second.body.key, { model, messages: userMessage() })).status).toBe(200);
    });

    it('should answer 401 invalid_api_key to a key deleted in the console, at once', async () => {
      const owner = await gateway.newCustomer({ balance: '10' });
      expect((await gateway.chat(owner.key, { model, messages: userMessage() })).status).toBe(200);

      const deleted = await gateway.call('DELETE', `/console/keys/${owner.keyId}`, { token: owner.token });
      expect(deleted.status).toBe(204);
      const responses = await bothEndpoints(`Bearer ${owner.key}`);

      for (const response of responses) {
        expectInvalidApiKey(response);
      }
    });

    it('should answer 401 (not 403) to a key that was disabled and then deleted', async () => {
      const owner = await gateway.newCustomer({ balance: '10' });
      await setStatus(owner, 'disabled');
      await gateway.call('DELETE', `/console/keys/${owner.keyId}`, { token: owner.token });

      for (const response of await bothEndpoints(`Bearer ${owner.key}`)) {
        expectInvalidApiKey(response);
      }
    });

    it('should never accept a deleted key again, even after an attempt to re-enable it', async () => {
      const owner = await gateway.newCustomer({ balance: '10' });
      await gateway.call('DELETE', `/console/keys/${owner.keyId}`, { token: owner.token });

      const reenable = await gateway.call('PATCH', `/console/keys/${owner.keyId}`, {
        token: owner.token,
        body: { status: 'enabled' },
      });

      expect(reenable.status).toBeGreaterThanOrEqual(400);
      expectInvalidApiKey(await gateway.chat(owner.key, { model, messages: userMessage() }));
    });
  });

  describe('authentication comes before the body', () => {
    it('should answer 401, not 400, to a bad key with a body that is not JSON', async () => {
      const response = await gateway.raw(
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${unknownKey()}`, 'content-type': 'application/json' },
        '{"model": "x", "messages": [',
      );

      expectInvalidApiKey(response);
    });

    it('should answer 401, not 400, to a missing key with a body that is not JSON', async () => {
      const response = await gateway.raw(
        'POST',
        '/v1/chat/completions',
        { 'content-type': 'application/json' },
        'not json at all',
      );

      expectInvalidApiKey(response);
    });

    it('should answer 401, not 400, to a bad key with a body that fails validation', async () => {
      const response = await gateway.chat(unknownKey(), { model: 'no-such-model', messages: [] });

      expectInvalidApiKey(response);
    });

    it('should answer 401 to a bad key with a non-JSON content type', async () => {
      const response = await gateway.raw(
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${unknownKey()}`, 'content-type': 'text/plain' },
        chatBody(),
      );

      expectInvalidApiKey(response);
    });

    it('should answer 403, not 400, to a disabled key with a body that is not JSON', async () => {
      const owner = await gateway.newCustomer({ balance: '10' });
      await gateway.call('PATCH', `/console/keys/${owner.keyId}`, { token: owner.token, body: { status: 'disabled' } });

      const response = await gateway.raw(
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
        '{oops',
      );

      expectApiError(response, 403, { type: 'invalid_request_error', code: 'api_key_disabled', param: null });
    });

    it('should answer 400 to a valid key with a body that is not JSON', async () => {
      const response = await gateway.raw(
        'POST',
        '/v1/chat/completions',
        { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
        '{oops',
      );

      expectInvalidRequest(response);
    });
  });

  describe('x-request-id', () => {
    it('should be on every response, errors included, and differ between requests', async () => {
      const disabled = await gateway.newCustomer({ balance: '10' });
      await gateway.call('PATCH', `/console/keys/${disabled.keyId}`, {
        token: disabled.token,
        body: { status: 'disabled' },
      });
      const responses = [
        await gateway.call('GET', '/v1/models', { token: customer.key }),
        await gateway.chat(customer.key, { model, messages: userMessage() }),
        await gateway.chat(customer.key, { model, messages: userMessage(), stream: true }),
        await gateway.chat(customer.key, { model: 'no-such-model', messages: userMessage() }),
        await gateway.raw('GET', '/v1/models', {}),
        await gateway.chat(unknownKey(), { model, messages: userMessage() }),
        await gateway.chat(disabled.key, { model, messages: userMessage() }),
        await gateway.raw(
          'POST',
          '/v1/chat/completions',
          { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
          '{oops',
        ),
        await gateway.call('GET', '/v1/no-such-endpoint', { token: customer.key }),
      ];

      expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 400, 401, 401, 403, 400, 404]);
      const ids = responses.map((response) => response.headers.get('x-request-id'));
      for (const id of ids) {
        expect(id).toEqual(expect.stringMatching(/\S/));
      }
      expect(new Set(ids).size).toBe(ids.length);
    });
  });
});
