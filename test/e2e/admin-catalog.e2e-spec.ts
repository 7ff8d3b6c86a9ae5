import { randomUUID } from 'node:crypto';
import { eventually, expectError, ISO_DATE_TIME, register, useGatewayWorld } from 'test/e2e/e2e-helpers';
import { Customer, HttpResult, TestGateway } from 'test/support/gateway';

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

describe('admin API: authentication, channels and models', () => {
  const world = useGatewayWorld();
  let customer: Customer;

  beforeAll(async () => {
    customer = await world.gateway.newCustomer({ balance: '10' });
  });

  const putChannel = (id: string, body: unknown) => world.gateway.admin('PUT', `/admin/channels/${id}`, body);
  const putModel = (id: string, body: unknown) =>
    world.gateway.admin('PUT', `/admin/models/${encodeURIComponent(id)}`, body);
  const publicModelIds = async (): Promise<string[]> => {
    const response = await world.gateway.call('GET', '/v1/models', { token: customer.key });
    expect(response.status).toBe(200);
    return response.body.data.map((model: { id: string }) => model.id);
  };
  /** Waits (catalog changes reach the in-memory catalog asynchronously) until the public list satisfies `done`. */
  const publicModelsWhen = (done: (ids: string[]) => boolean) => eventually(publicModelIds, done, 2_000);

  const channelBody = (overrides: Record<string, unknown> = {}) => ({
    type: 'openai',
    baseUrl: `${world.gateway.mock.url}/v1`,
    apiKey: `upstream-secret-${randomUUID()}`,
    priority: 0,
    weight: 1,
    enabled: true,
    ...overrides,
  });
  const modelBody = (channelId: string, overrides: Record<string, unknown> = {}) => ({
    inputPrice: '2.5',
    outputPrice: '10',
    maxOutputTokens: 16384,
    vision: true,
    rpm: 60,
    tpm: 100000,
    enabled: true,
    routes: [{ channelId, upstreamModel: 'mock-gpt' }],
    ...overrides,
  });
  async function newChannel(overrides: Record<string, unknown> = {}): Promise<string> {
    const id = unique('ch');
    const response = await putChannel(id, channelBody(overrides));
    expect(response.status).toBe(200);
    return id;
  }

  describe('admin authentication', () => {
    // Every row has the same length: jest would take a missing argument for a `done` callback.
    const adminRoutes: [string, string, unknown][] = [
      ['GET', '/admin/channels', undefined],
      ['GET', '/admin/models', undefined],
      ['GET', '/admin/accounts?email=example', undefined],
      ['PUT', '/admin/channels/auth-probe', { type: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'k' }],
      ['POST', `/admin/accounts/${randomUUID()}/adjustments`, { amount: '1', reason: 'x' }],
    ];

    it.each(adminRoutes)(
      'should answer 401 invalid_admin_token to %s %s without Authorization',
      async (method, path, body) => {
        expectError(await world.gateway.call(method, path, { body }), 401, { code: 'invalid_admin_token' });
      },
    );

    it.each(adminRoutes)(
      'should answer 401 invalid_admin_token to %s %s with a wrong token',
      async (method, path, body) => {
        const response = await world.gateway.call(method, path, { body, token: `${world.gateway.adminToken}x` });
        expectError(response, 401, { code: 'invalid_admin_token' });
      },
    );

    it.each([
      ['the Basic scheme', () => `Basic ${Buffer.from(`admin:${world.gateway.adminToken}`).toString('base64')}`],
      ['the token without a scheme', () => world.gateway.adminToken],
      ['a lower-case scheme', () => `bearer ${world.gateway.adminToken}`],
      ['a doubled space', () => `Bearer  ${world.gateway.adminToken}`],
      ['an extra character', () => `Bearer ${world.gateway.adminToken}x`],
      ['an empty bearer', () => 'Bearer '],
      ['a token prefix', () => `Bearer ${world.gateway.adminToken.slice(0, -1)}`],
    ])('should answer 401 invalid_admin_token with %s', async (_case, header) => {
      const response = await world.gateway.raw('GET', '/admin/channels', { authorization: header() });
      expectError(response, 401, { code: 'invalid_admin_token' });
    });

    it('should refuse console sessions and API keys on /admin', async () => {
      expectError(await world.gateway.call('GET', '/admin/models', { token: customer.token }), 401, {
        code: 'invalid_admin_token',
      });
      expectError(await world.gateway.call('GET', '/admin/models', { token: customer.key }), 401, {
        code: 'invalid_admin_token',
      });
    });

    it('should not create anything on an unauthenticated write', async () => {
      const id = unique('ch-unauth');
      expectError(await world.gateway.call('PUT', `/admin/channels/${id}`, { body: channelBody() }), 401, {
        code: 'invalid_admin_token',
      });
      const { rows } = await world.db.query('SELECT 1 FROM channels WHERE id = $1', [id]);
      expect(rows).toHaveLength(0);
    });

    it('should let the admin token through', async () => {
      expect((await world.gateway.admin('GET', '/admin/channels')).status).toBe(200);
    });

    describe('with ADMIN_TOKEN unset', () => {
      let closed: TestGateway;

      beforeAll(async () => {
        closed = await TestGateway.start({ ADMIN_TOKEN: '' });
      });
      afterAll(() => closed.close());

      it.each([
        ['no Authorization', undefined],
        ["the other deployment's admin token", 'test-admin-token-0123456789'],
        ['an empty bearer', ''],
      ])('should answer 401 to everyone on /admin, here with %s', async (_case, token) => {
        const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
        for (const path of ['/admin/channels', '/admin/models', '/admin/accounts']) {
          expectError(await closed.raw('GET', path, headers), 401, { code: 'invalid_admin_token' });
        }
        expectError(
          await closed.raw('PUT', '/admin/channels/x', { ...headers, 'content-type': 'application/json' }, '{}'),
          401,
          {
            code: 'invalid_admin_token',
          },
        );
      });

      it('should still serve the console', async () => {
        const registered = await register(closed);
        expect((await closed.call('GET', '/console/account', { token: registered.token })).status).toBe(200);
      });
    });
  });

  describe('channels', () => {
    it('should create a channel with PUT and answer 200 without the upstream key', async () => {
      const id = unique('openai-main');
      const secret = `upstream-secret-${randomUUID()}`;
      const response = await putChannel(id, channelBody({ apiKey: secret, priority: 5, weight: 3 }));

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id,
        type: 'openai',
        baseUrl: `${world.gateway.mock.url}/v1`,
        priority: 5,
        weight: 3,
        enabled: true,
      });
      expect(response.body).not.toHaveProperty('apiKey');
      expect(typeof response.body.maskedApiKey).toBe('string');
      expect(response.body.maskedApiKey).not.toBe(secret);
      expect(response.text).not.toContain(secret);
      expect(response.text).not.toContain(secret.slice(4, -4));
      expect(response.body.createdAt).toMatch(ISO_DATE_TIME);
    });

    it('should list channels without their upstream keys', async () => {
      const id = unique('ch-list');
      const secret = `upstream-secret-${randomUUID()}`;
      expect((await putChannel(id, channelBody({ apiKey: secret }))).status).toBe(200);

      const response = await world.gateway.admin('GET', '/admin/channels');
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual(
        expect.arrayContaining([expect.objectContaining({ id, type: 'openai', enabled: true })]),
      );
      for (const channel of response.body.data) {
        expect(channel).not.toHaveProperty('apiKey');
      }
      expect(response.text).not.toContain(secret);
      expect(response.text).not.toContain(secret.slice(4, -4));
    });

    it('should encrypt the upstream key at rest', async () => {
      const id = unique('ch-sealed');
      const secret = `upstream-secret-${randomUUID()}`;
      expect((await putChannel(id, channelBody({ apiKey: secret }))).status).toBe(200);

      const { rows } = await world.db.query<{ api_key_sealed: string; row: string }>(
        'SELECT api_key_sealed, row_to_json(c)::text AS row FROM channels c WHERE id = $1',
        [id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].api_key_sealed).not.toContain(secret);
      expect(rows[0].api_key_sealed).not.toContain(Buffer.from(secret).toString('base64'));
      expect(rows[0].api_key_sealed).not.toContain(Buffer.from(secret).toString('hex'));
      expect(rows[0].row).not.toContain(secret);
      expect(rows[0].row).not.toContain(secret.slice(4, -4));
    });

    it('should replace a channel on a second PUT', async () => {
      const id = unique('ch-replace');
      const first = await putChannel(id, channelBody({ priority: 1 }));
      expect(first.status).toBe(200);
      const newSecret = `replacement-secret-${randomUUID()}`;
      const second = await putChannel(
        id,
        channelBody({
          type: 'anthropic',
          baseUrl: 'https://api.example.com/v1',
          apiKey: newSecret,
          priority: 7,
          weight: 2,
          enabled: false,
        }),
      );

      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({
        id,
        type: 'anthropic',
        baseUrl: 'https://api.example.com/v1',
        priority: 7,
        weight: 2,
        enabled: false,
      });
      expect(second.text).not.toContain(newSecret);
      expect(second.body.createdAt).toBe(first.body.createdAt);

      const listed = await world.gateway.admin('GET', '/admin/channels');
      const matching = listed.body.data.filter((channel: { id: string }) => channel.id === id);
      expect(matching).toEqual([expect.objectContaining({ id, type: 'anthropic', priority: 7, enabled: false })]);
    });

    it('should apply the default priority, weight and enabled flag when they are left out', async () => {
      const id = unique('ch-defaults');
      const response = await putChannel(id, {
        type: 'gemini',
        baseUrl: 'https://generativelanguage.example.com/v1beta',
        apiKey: 'gemini-key-0123456789abcdef',
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id, type: 'gemini', priority: 0, weight: 1, enabled: true });
    });

    it('should send the replaced upstream key to the upstream', async () => {
      const channelId = await newChannel({ apiKey: `first-upstream-key-${randomUUID()}` });
      const model = unique('model-rekey');
      expect((await putModel(model, modelBody(channelId))).status).toBe(200);
      await publicModelsWhen((ids) => ids.includes(model));

      const newSecret = `second-upstream-key-${randomUUID()}`;
      expect((await putChannel(channelId, channelBody({ apiKey: newSecret }))).status).toBe(200);

      const sawNewKey = () =>
        world.gateway.mock.requests.some((request) => request.headers.authorization === `Bearer ${newSecret}`);
      await eventually(
        async () => {
          const response = await world.gateway.chat(customer.key, {
            model,
            messages: [{ role: 'user', content: 'hi' }],
          });
          expect(response.status).toBe(200);
          return sawNewKey();
        },
        (seen) => seen,
        2_000,
        50,
      );
      expect(sawNewKey()).toBe(true);
    });

    it.each([
      ['an unknown type', { type: 'azure' }, 'type'],
      ['a missing type', { type: undefined }, 'type'],
      ['a baseUrl that is not a URL', { baseUrl: 'not a url' }, 'baseUrl'],
      ['a baseUrl with another protocol', { baseUrl: 'ftp://example.com/v1' }, 'baseUrl'],
      ['a baseUrl without protocol', { baseUrl: 'example.com/v1' }, 'baseUrl'],
      ['a missing baseUrl', { baseUrl: undefined }, 'baseUrl'],
      ['a missing apiKey', { apiKey: undefined }, 'apiKey'],
      ['an empty apiKey', { apiKey: '' }, 'apiKey'],
      ['a non-string apiKey', { apiKey: 12345 }, 'apiKey'],
      ['a fractional priority', { priority: 1.5 }, 'priority'],
      ['a string priority', { priority: '1' }, 'priority'],
      ['a negative weight', { weight: -1 }, 'weight'],
      ['a non-boolean enabled', { enabled: 'yes' }, 'enabled'],
      ['an unknown extra field', { region: 'eu' }, 'region'],
    ])('should answer 400 naming the field for %s, and store nothing', async (_case, overrides, param) => {
      const id = unique('ch-bad');
      expectError(await putChannel(id, channelBody(overrides)), 400, { param });
      const { rows } = await world.db.query('SELECT 1 FROM channels WHERE id = $1', [id]);
      expect(rows).toHaveLength(0);
    });

    it.each([['-leading-dash'], ['has%20space'], ['bad!char']])(
      'should answer 400 naming channelId for the path id %p',
      async (badId) => {
        expectError(await putChannel(badId, channelBody()), 400, { param: 'channelId' });
      },
    );

    it('should accept a channel id of 128 characters, the documented maximum', async () => {
      const id = `ch-${randomUUID()}-`.padEnd(128, 'x');
      const response = await putChannel(id, channelBody());
      expect({ status: response.status, body: response.body }).toMatchObject({ status: 200, body: { id } });
    });

    it('should answer 400 naming channelId, in the error shape, for a path id of 129 characters', async () => {
      expectError(await putChannel('x'.repeat(129), channelBody()), 400, { param: 'channelId' });
    });
  });

  describe('models', () => {
    let channelId: string;

    beforeAll(async () => {
      channelId = await newChannel();
    });

    it('should create a model from the contract example and echo exact decimal prices', async () => {
      const id = unique('gpt-4o');
      const body = modelBody(channelId, { routes: [{ channelId, upstreamModel: 'gpt-4o-2024-08-06' }] });
      const response = await putModel(id, body);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id,
        inputPrice: '2.5',
        outputPrice: '10',
        maxOutputTokens: 16384,
        vision: true,
        rpm: 60,
        tpm: 100000,
        enabled: true,
        routes: [{ channelId, upstreamModel: 'gpt-4o-2024-08-06' }],
      });
      expect(response.text).toContain('"inputPrice":"2.5"');
      expect(response.text).toContain('"outputPrice":"10"');
    });

    it('should default a model to kind chat, keep kind embedding, and refuse another kind naming kind', async () => {
      const chat = await putModel(unique('kind-default'), modelBody(channelId));
      const embedding = await putModel(unique('kind-embedding'), modelBody(channelId, { kind: 'embedding' }));

      expect(chat.body).toMatchObject({ kind: 'chat' });
      expect(embedding.body).toMatchObject({ kind: 'embedding' });
      const listed = await world.gateway.admin('GET', '/admin/models');
      expect(listed.body.data).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: embedding.body.id, kind: 'embedding' })]),
      );
      expectError(await putModel(unique('kind-bad'), modelBody(channelId, { kind: 'rerank' })), 400, { param: 'kind' });
    });

    it.each([
      ['0.000001', '0.000002'],
      ['0.000000001', '9999.999999999'],
      ['0', '0.5'],
      ['15', '75.125'],
    ])('should keep the prices %s and %s exactly', async (inputPrice, outputPrice) => {
      const id = unique('model-price');
      const response = await putModel(id, modelBody(channelId, { inputPrice, outputPrice }));
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ inputPrice, outputPrice });

      const listed = await world.gateway.admin('GET', '/admin/models');
      expect(listed.body.data).toEqual(
        expect.arrayContaining([expect.objectContaining({ id, inputPrice, outputPrice })]),
      );
    });

    it.each([
      ['an exponent', '1e3'],
      ['a negative price', '-1'],
      ['ten decimals', '1.0000000001'],
      ['a JSON number', 2.5],
      ['an empty string', ''],
      ['a leading plus', '+1'],
      ['surrounding spaces', ' 1 '],
      ['a trailing dot', '1.'],
      ['a comma', '1,5'],
      ['letters', 'abc'],
      ['null', null],
    ])('should answer 400 naming the price field for %s', async (_case, price) => {
      const id = unique('model-badprice');
      expectError(await putModel(id, modelBody(channelId, { inputPrice: price })), 400, { param: 'inputPrice' });
      expectError(await putModel(id, modelBody(channelId, { outputPrice: price })), 400, { param: 'outputPrice' });
      const listed = await world.gateway.admin('GET', '/admin/models');
      expect(listed.body.data.map((model: { id: string }) => model.id)).not.toContain(id);
    });

    it('should answer 400 naming routes[i].channelId for an unknown channel, and store nothing', async () => {
      const id = unique('model-nochannel');
      const first = await putModel(
        id,
        modelBody(channelId, { routes: [{ channelId: 'no-such-channel', upstreamModel: 'm' }] }),
      );
      expectError(first, 400, { param: 'routes[0].channelId' });

      const second = await putModel(
        id,
        modelBody(channelId, {
          routes: [
            { channelId, upstreamModel: 'm' },
            { channelId: 'no-such-channel', upstreamModel: 'm' },
          ],
        }),
      );
      expectError(second, 400, { param: 'routes[1].channelId' });

      const { rows } = await world.db.query('SELECT 1 FROM models WHERE id = $1', [id]);
      expect(rows).toHaveLength(0);
    });

    it.each([
      ['missing routes', { routes: undefined }, 'routes'],
      ['a route without upstreamModel', { routes: [{ channelId: 'x' }] }, 'routes[0].upstreamModel'],
      ['a route without channelId', { routes: [{ upstreamModel: 'm' }] }, 'routes[0].channelId'],
      ['a missing maxOutputTokens', { maxOutputTokens: undefined }, 'maxOutputTokens'],
      ['a zero maxOutputTokens', { maxOutputTokens: 0 }, 'maxOutputTokens'],
      ['a fractional rpm', { rpm: 1.5 }, 'rpm'],
      ['a missing tpm', { tpm: undefined }, 'tpm'],
      ['a string vision flag', { vision: 'true' }, 'vision'],
      ['an unknown extra field', { contextWindow: 128000 }, 'contextWindow'],
    ])('should answer 400 naming the field for %s', async (_case, overrides, param) => {
      expectError(await putModel(unique('model-bad'), modelBody(channelId, overrides)), 400, { param });
    });

    it('should answer 400 naming channelId twice in routes', async () => {
      const response = await putModel(
        unique('model-dup'),
        modelBody(channelId, {
          routes: [
            { channelId, upstreamModel: 'a' },
            { channelId, upstreamModel: 'b' },
          ],
        }),
      );
      expectError(response, 400, { param: 'routes[1].channelId' });
    });

    it('should list models with GET /admin/models', async () => {
      const id = unique('model-list');
      const created = await putModel(id, modelBody(channelId));
      expect(created.status).toBe(200);

      const response = await world.gateway.admin('GET', '/admin/models');
      expect(response.status).toBe(200);
      const matching = response.body.data.filter((model: { id: string }) => model.id === id);
      expect(matching).toEqual([created.body]);
    });

    it('should replace a model and its routes on a second PUT', async () => {
      const id = unique('model-replace');
      const otherChannel = await newChannel();
      expect((await putModel(id, modelBody(channelId))).status).toBe(200);

      const replaced = await putModel(
        id,
        modelBody(otherChannel, {
          inputPrice: '3',
          outputPrice: '15',
          maxOutputTokens: 4096,
          vision: false,
          routes: [{ channelId: otherChannel, upstreamModel: 'other-model' }],
        }),
      );
      expect(replaced.status).toBe(200);

      const listed = await world.gateway.admin('GET', '/admin/models');
      const matching = listed.body.data.filter((model: { id: string }) => model.id === id);
      expect(matching).toEqual([
        expect.objectContaining({
          id,
          inputPrice: '3',
          outputPrice: '15',
          maxOutputTokens: 4096,
          vision: false,
          routes: [expect.objectContaining({ channelId: otherChannel, upstreamModel: 'other-model' })],
        }),
      ]);
    });

    it('should keep the order of routes as given', async () => {
      const second = await newChannel();
      const third = await newChannel();
      const routes = [
        { channelId: third, upstreamModel: 'c' },
        { channelId, upstreamModel: 'a' },
        { channelId: second, upstreamModel: 'b' },
      ];
      const response = await putModel(unique('model-order'), modelBody(channelId, { routes }));
      expect(response.status).toBe(200);
      expect(response.body.routes).toEqual(routes.map((route) => expect.objectContaining(route)));
    });

    it('should accept model ids with a slash, URL-encoded, and serve them', async () => {
      const id = `meta-llama/llama-3-${randomUUID().slice(0, 8)}`;
      const response = await world.gateway.admin(
        'PUT',
        `/admin/models/${id.replace('/', '%2F')}`,
        modelBody(channelId),
      );
      expect(response.status).toBe(200);
      expect(response.body.id).toBe(id);

      const listed = await world.gateway.admin('GET', '/admin/models');
      expect(listed.body.data.map((model: { id: string }) => model.id)).toContain(id);
      expect(await publicModelsWhen((ids) => ids.includes(id))).toContain(id);

      const completion = await world.gateway.chat(customer.key, {
        model: id,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(completion.status).toBe(200);
      expect(completion.body.model).toBe(id);
    });

    it('should store a price far beyond any real one exactly or refuse it with 400, never answer 500', async () => {
      const price = '123456789012.123456789';
      const response = await putModel(unique('model-hugeprice'), modelBody(channelId, { outputPrice: price }));
      if (response.status === 200) {
        expect(response.body.outputPrice).toBe(price);
      } else {
        expectError(response, 400, { param: 'outputPrice' });
      }
    });

    it.each([['-leading-dash'], ['bad%20id'], ['%2Fleading-slash']])(
      'should answer 400 naming modelId for the path id %p',
      async (badId) => {
        expectError(await world.gateway.admin('PUT', `/admin/models/${badId}`, modelBody(channelId)), 400, {
          param: 'modelId',
        });
      },
    );

    it('should accept a model id of 128 characters, the documented maximum', async () => {
      const id = `vendor/model-${randomUUID()}-`.padEnd(128, 'x');
      const response = await world.gateway.admin(
        'PUT',
        `/admin/models/${encodeURIComponent(id)}`,
        modelBody(channelId),
      );
      expect({ status: response.status, body: response.body }).toMatchObject({ status: 200, body: { id } });
    });

    it('should answer 400 naming modelId, in the error shape, for a path id of 129 characters', async () => {
      expectError(await world.gateway.admin('PUT', `/admin/models/${'x'.repeat(129)}`, modelBody(channelId)), 400, {
        param: 'modelId',
      });
    });

    it('should answer 400 in the error shape to a path with broken percent-encoding', async () => {
      expectError(await world.gateway.admin('PUT', '/admin/models/bad%ZZ', modelBody(channelId)), 400);
    });

    describe('visibility in GET /v1/models', () => {
      const waitFor = async (id: string, visible: boolean): Promise<string[]> => {
        const ids = await publicModelsWhen((list) => list.includes(id) === visible);
        return ids;
      };

      it('should list an enabled model with an enabled route', async () => {
        const id = unique('model-visible');
        expect((await putModel(id, modelBody(channelId))).status).toBe(200);
        expect(await waitFor(id, true)).toContain(id);

        const response = await world.gateway.call('GET', '/v1/models', { token: customer.key });
        expect(response.body.data).toEqual(
          expect.arrayContaining([{ id, object: 'model', created: expect.any(Number), owned_by: expect.any(String) }]),
        );
      });

      it('should not list a disabled model, and list it once enabled', async () => {
        const hidden = unique('model-disabled');
        const sentinel = unique('model-sentinel');
        expect((await putModel(hidden, modelBody(channelId, { enabled: false }))).status).toBe(200);
        expect((await putModel(sentinel, modelBody(channelId))).status).toBe(200);
        // Once the later change is visible, the earlier one has been loaded as well.
        expect(await waitFor(sentinel, true)).not.toContain(hidden);

        expect((await putModel(hidden, modelBody(channelId, { enabled: true }))).status).toBe(200);
        expect(await waitFor(hidden, true)).toContain(hidden);

        expect((await putModel(hidden, modelBody(channelId, { enabled: false }))).status).toBe(200);
        expect(await waitFor(hidden, false)).not.toContain(hidden);
      });

      it('should not list a model without routes', async () => {
        const hidden = unique('model-noroutes');
        const sentinel = unique('model-sentinel');
        expect((await putModel(hidden, modelBody(channelId, { routes: [] }))).status).toBe(200);
        expect((await putModel(sentinel, modelBody(channelId))).status).toBe(200);
        expect(await waitFor(sentinel, true)).not.toContain(hidden);
      });

      it('should drop a model whose only channel is disabled, and bring it back when the channel is enabled', async () => {
        const ownChannel = unique('ch-toggle');
        const body = channelBody();
        expect((await putChannel(ownChannel, body)).status).toBe(200);
        const id = unique('model-toggle');
        expect((await putModel(id, modelBody(ownChannel))).status).toBe(200);
        expect(await waitFor(id, true)).toContain(id);

        expect((await putChannel(ownChannel, { ...body, enabled: false })).status).toBe(200);
        expect(await waitFor(id, false)).not.toContain(id);
        const completion = await world.gateway.chat(customer.key, {
          model: id,
          messages: [{ role: 'user', content: 'hi' }],
        });
        expect(completion.status).toBe(400);
        expect(completion.body.error).toMatchObject({ param: 'model' });

        // The admin catalog still has it.
        const listed = await world.gateway.admin('GET', '/admin/models');
        expect(listed.body.data.map((model: { id: string }) => model.id)).toContain(id);

        expect((await putChannel(ownChannel, { ...body, enabled: true })).status).toBe(200);
        expect(await waitFor(id, true)).toContain(id);
      });

      it('should keep a model listed while one of its routes is still enabled', async () => {
        const off = unique('ch-off');
        const on = unique('ch-on');
        expect((await putChannel(off, channelBody({ enabled: false }))).status).toBe(200);
        expect((await putChannel(on, channelBody())).status).toBe(200);
        const id = unique('model-partial');
        const routes = [
          { channelId: off, upstreamModel: 'mock-gpt' },
          { channelId: on, upstreamModel: 'mock-gpt' },
        ];
        expect((await putModel(id, modelBody(off, { routes }))).status).toBe(200);
        expect(await waitFor(id, true)).toContain(id);

        const completion = await world.gateway.chat(customer.key, {
          model: id,
          messages: [{ role: 'user', content: 'hi' }],
        });
        expect(completion.status).toBe(200);
      });
    });
  });

  it('should answer every admin error in the error shape, never as HTML or plain text', async () => {
    const responses: HttpResult[] = [
      await world.gateway.admin('PUT', '/admin/channels/ok-id', 'not json'),
      await world.gateway.call('PUT', '/admin/channels/ok-id', {
        token: world.gateway.adminToken,
        body: '{"type":',
      }),
    ];
    for (const response of responses) {
      expectError(response, 400);
    }
  });
});
