import { createHash, randomUUID } from 'node:crypto';
import {
  eventually,
  expectError,
  ISO_DATE_TIME,
  register,
  Registered,
  useGatewayWorld,
  UUID,
} from 'test/e2e/e2e-helpers';

describe('console API keys', () => {
  const world = useGatewayWorld();

  const createKey = (token: string, name = 'production') =>
    world.gateway.call('POST', '/console/keys', { token, body: { name } });
  const listKeys = (token: string) => world.gateway.call('GET', '/console/keys', { token });
  const patchKey = (token: string, id: string, body: unknown) =>
    world.gateway.call('PATCH', `/console/keys/${id}`, { token, body });
  const deleteKey = (token: string, id: string) => world.gateway.call('DELETE', `/console/keys/${id}`, { token });
  const models = (key: string) => world.gateway.call('GET', '/v1/models', { token: key });

  async function newKey(owner: Registered, name = 'production'): Promise<{ id: string; key: string }> {
    const created = await createKey(owner.token, name);
    expect(created.status).toBe(201);
    return { id: created.body.id, key: created.body.key };
  }

  describe('creation', () => {
    it('should answer 201 with the secret key, shown this once', async () => {
      const owner = await register(world.gateway);
      const before = Date.now();
      const response = await createKey(owner.token, 'my laptop');

      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'my laptop',
        status: 'enabled',
        disabledBy: null,
        maskedKey: expect.any(String),
        createdAt: expect.stringMatching(ISO_DATE_TIME),
        lastUsedAt: null,
        expiresAt: null,
        allowedModels: null,
        spendLimit: null,
        spent: '0',
        key: expect.stringMatching(/^sk-[0-9A-Za-z]{40,}$/),
      });
      expect(response.body.maskedKey).not.toContain(response.body.key);
      expect(Date.parse(response.body.createdAt)).toBeGreaterThanOrEqual(before - 5_000);
    });

    it('should give a new key that works at once on /v1/models', async () => {
      const owner = await register(world.gateway);
      const { key } = await newKey(owner);
      const response = await models(key);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ object: 'list', data: expect.any(Array) });
    });

    it('should never give the same secret twice', async () => {
      const owner = await register(world.gateway);
      const keys = await Promise.all(Array.from({ length: 5 }, () => newKey(owner)));
      expect(new Set(keys.map((k) => k.key)).size).toBe(5);
      expect(new Set(keys.map((k) => k.id)).size).toBe(5);
    });

    it.each([
      ['a missing name', {}, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['a non-string name', { name: 42 }, 'name'],
      ['a name over 100 characters', { name: 'x'.repeat(101) }, 'name'],
      ['an unknown extra field', { name: 'ok', status: 'disabled' }, 'status'],
    ])('should answer 400 naming the field for %s', async (_case, body, param) => {
      const owner = await register(world.gateway);
      expectError(await world.gateway.call('POST', '/console/keys', { token: owner.token, body }), 400, { param });
      expect((await listKeys(owner.token)).body).toEqual({ data: [] });
    });

    it('should answer 401 without a console session', async () => {
      expectError(await world.gateway.call('POST', '/console/keys', { body: { name: 'x' } }), 401);
      expectError(await world.gateway.call('GET', '/console/keys'), 401);
    });

    it('should refuse an API key in place of a console session', async () => {
      const owner = await register(world.gateway);
      const { key } = await newKey(owner);
      expectError(await world.gateway.call('GET', '/console/keys', { token: key }), 401);
    });
  });

  describe('listing and storage', () => {
    it('should list keys with a masked form and never the secret', async () => {
      const owner = await register(world.gateway);
      const first = await newKey(owner, 'first');
      const second = await newKey(owner, 'second');

      const response = await listKeys(owner.token);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        data: expect.arrayContaining([
          expect.objectContaining({ id: first.id, name: 'first', status: 'enabled' }),
          expect.objectContaining({ id: second.id, name: 'second', status: 'enabled' }),
        ]),
      });
      expect(response.body.data).toHaveLength(2);
      for (const item of response.body.data) {
        expect(item).toEqual({
          id: expect.stringMatching(UUID),
          name: expect.any(String),
          status: 'enabled',
          disabledBy: null,
          maskedKey: expect.any(String),
          createdAt: expect.stringMatching(ISO_DATE_TIME),
          lastUsedAt: null,
          expiresAt: null,
          allowedModels: null,
          spendLimit: null,
          spent: '0',
        });
        expect(item).not.toHaveProperty('key');
      }
      for (const { key } of [first, second]) {
        expect(response.text).not.toContain(key);
        // Not even the part after the displayed prefix.
        expect(response.text).not.toContain(key.slice(8));
        expect(response.text).not.toContain(createHash('sha256').update(key).digest('hex'));
      }
    });

    it('should store only the SHA-256 hash of the secret', async () => {
      const owner = await register(world.gateway);
      const { id, key } = await newKey(owner);

      const { rows } = await world.db.query<{ key_hash: string; row: string }>(
        'SELECT key_hash, row_to_json(k)::text AS row FROM api_keys k WHERE id = $1',
        [id],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].key_hash).toBe(createHash('sha256').update(key).digest('hex'));
      expect(rows[0].row).not.toContain(key);
      expect(rows[0].row).not.toContain(key.slice(8));

      const everywhere = await world.db.query(
        `SELECT table_name FROM (
           SELECT 'api_keys' AS table_name, row_to_json(t)::text AS row FROM api_keys t
           UNION ALL SELECT 'accounts', row_to_json(t)::text FROM accounts t
         ) rows WHERE position($1 in row) > 0`,
        [key.slice(8)],
      );
      expect(everywhere.rows).toEqual([]);
    });

    it('should let one account hold several working keys', async () => {
      const owner = await register(world.gateway);
      const keys = [await newKey(owner, 'a'), await newKey(owner, 'b'), await newKey(owner, 'c')];

      const listed = await listKeys(owner.token);
      expect(listed.body.data.map((k: { id: string }) => k.id).sort()).toEqual(keys.map((k) => k.id).sort());
      for (const { key } of keys) {
        expect((await models(key)).status).toBe(200);
      }
    });

    it("should not show one account's keys to another", async () => {
      const owner = await register(world.gateway);
      const stranger = await register(world.gateway);
      await newKey(owner);
      const strangersKey = await newKey(stranger);

      const listed = await listKeys(stranger.token);
      expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([strangersKey.id]);
    });

    it('should set lastUsedAt after the key is used', async () => {
      const owner = await register(world.gateway);
      const { id, key } = await newKey(owner);
      const before = Date.now();
      expect((await models(key)).status).toBe(200);

      const listed = await eventually(
        () => listKeys(owner.token),
        (response) => response.body.data?.[0]?.lastUsedAt !== null,
        3_000,
      );
      const item = listed.body.data.find((k: { id: string }) => k.id === id);
      expect(item.lastUsedAt).toMatch(ISO_DATE_TIME);
      expect(Date.parse(item.lastUsedAt)).toBeGreaterThanOrEqual(before - 5_000);
      expect(Date.parse(item.lastUsedAt)).toBeLessThanOrEqual(Date.now() + 5_000);
    });
  });

  describe('disable and enable', () => {
    it('should answer 403 api_key_disabled for a disabled key, and work again once enabled', async () => {
      const owner = await register(world.gateway);
      const { id, key } = await newKey(owner);
      expect((await models(key)).status).toBe(200);

      const disabled = await patchKey(owner.token, id, { status: 'disabled' });
      expect(disabled.status).toBe(200);
      expect(disabled.body).toEqual({
        id,
        name: 'production',
        status: 'disabled',
        // The owner disabled it, so the owner may enable it again.
        disabledBy: 'owner',
        maskedKey: expect.any(String),
        createdAt: expect.stringMatching(ISO_DATE_TIME),
        lastUsedAt: disabled.body.lastUsedAt === null ? null : expect.stringMatching(ISO_DATE_TIME),
        expiresAt: null,
        allowedModels: null,
        spendLimit: null,
        spent: '0',
      });
      expect(disabled.text).not.toContain(key);

      expectError(await models(key), 403, { code: 'api_key_disabled' });
      expectError(await world.gateway.chat(key, { model: 'any', messages: [{ role: 'user', content: 'hi' }] }), 403, {
        code: 'api_key_disabled',
      });
      const listed = await listKeys(owner.token);
      expect(listed.body.data).toEqual([expect.objectContaining({ id, status: 'disabled' })]);

      const enabled = await patchKey(owner.token, id, { status: 'enabled' });
      expect(enabled.status).toBe(200);
      expect(enabled.body).toMatchObject({ id, status: 'enabled' });
      expect((await models(key)).status).toBe(200);
    });

    it('should answer 200 when the key already has the requested status', async () => {
      const owner = await register(world.gateway);
      const { id, key } = await newKey(owner);
      const response = await patchKey(owner.token, id, { status: 'enabled' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id, status: 'enabled' });
      expect((await models(key)).status).toBe(200);
    });

    it('should leave the other keys of the account working when one is disabled', async () => {
      const owner = await register(world.gateway);
      const disabled = await newKey(owner);
      const other = await newKey(owner);
      expect((await patchKey(owner.token, disabled.id, { status: 'disabled' })).status).toBe(200);
      expectError(await models(disabled.key), 403, { code: 'api_key_disabled' });
      expect((await models(other.key)).status).toBe(200);
    });

    it.each([
      ['"deleted" (deleting goes through DELETE)', { status: 'deleted' }],
      ['an unknown status', { status: 'paused' }],
      ['upper case', { status: 'DISABLED' }],
      ['a non-string status', { status: false }],
    ])('should answer 400 naming status for %s, and leave the key as it was', async (_case, body) => {
      const owner = await register(world.gateway);
      const { id, key } = await newKey(owner);
      expectError(await patchKey(owner.token, id, body), 400, { param: 'status' });
      expect((await listKeys(owner.token)).body.data).toEqual([expect.objectContaining({ id, status: 'enabled' })]);
      expect((await models(key)).status).toBe(200);
    });

    it('should answer 400 naming an unknown extra field', async () => {
      const owner = await register(world.gateway);
      const { id } = await newKey(owner);
      expectError(await patchKey(owner.token, id, { status: 'disabled', owner: 'me' }), 400, { param: 'owner' });
    });

    it('should answer 400 to a change that changes nothing', async () => {
      const owner = await register(world.gateway);
      const { id } = await newKey(owner);
      expectError(await patchKey(owner.token, id, {}), 400, { param: null });
    });
  });

  describe('deletion', () => {
    it('should answer 204, drop the key from the list, and refuse it forever with 401', async () => {
      const owner = await register(world.gateway);
      const { id, key } = await newKey(owner);
      const kept = await newKey(owner, 'kept');
      expect((await models(key)).status).toBe(200);

      const deleted = await deleteKey(owner.token, id);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');

      const listed = await listKeys(owner.token);
      expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([kept.id]);
      expectError(await models(key), 401, { code: 'invalid_api_key' });
      expectError(await world.gateway.chat(key, { model: 'any', messages: [{ role: 'user', content: 'hi' }] }), 401, {
        code: 'invalid_api_key',
      });

      expectError(await patchKey(owner.token, id, { status: 'enabled' }), 404);
      expectError(await patchKey(owner.token, id, { status: 'disabled' }), 404);
      expectError(await deleteKey(owner.token, id), 404);
      expectError(await models(key), 401, { code: 'invalid_api_key' });
      expect((await models(kept.key)).status).toBe(200);
    });

    it('should delete a disabled key, which then answers 401 instead of 403', async () => {
      const owner = await register(world.gateway);
      const { id, key } = await newKey(owner);
      expect((await patchKey(owner.token, id, { status: 'disabled' })).status).toBe(200);
      expectError(await models(key), 403, { code: 'api_key_disabled' });
      expect((await deleteKey(owner.token, id)).status).toBe(204);
      expectError(await models(key), 401, { code: 'invalid_api_key' });
    });

    it('should keep the deleted key on record with status deleted', async () => {
      const owner = await register(world.gateway);
      const { id } = await newKey(owner);
      expect((await deleteKey(owner.token, id)).status).toBe(204);
      const { rows } = await world.db.query('SELECT status FROM api_keys WHERE id = $1', [id]);
      expect(rows).toEqual([{ status: 'deleted' }]);
    });
  });

  describe('ownership and ids', () => {
    it('should answer 404 when another account patches or deletes my key, and leave it working', async () => {
      const owner = await register(world.gateway);
      const stranger = await register(world.gateway);
      const { id, key } = await newKey(owner);

      expectError(await patchKey(stranger.token, id, { status: 'disabled' }), 404);
      expectError(await deleteKey(stranger.token, id), 404);

      expect((await models(key)).status).toBe(200);
      expect((await listKeys(owner.token)).body.data).toEqual([expect.objectContaining({ id, status: 'enabled' })]);
    });

    it('should answer 404 for a key id that does not exist', async () => {
      const owner = await register(world.gateway);
      expectError(await patchKey(owner.token, randomUUID(), { status: 'disabled' }), 404);
      expectError(await deleteKey(owner.token, randomUUID()), 404);
    });

    it.each([['not-a-uuid'], ['123'], ['3ed793d5-3e35-4f0a-bee9-34ba99435400x']])(
      'should answer 400 naming keyId for the id %p',
      async (badId) => {
        const owner = await register(world.gateway);
        expectError(await patchKey(owner.token, badId, { status: 'disabled' }), 400, { param: 'keyId' });
        expectError(await deleteKey(owner.token, badId), 400, { param: 'keyId' });
      },
    );

    it('should answer 401 to PATCH and DELETE without a console session', async () => {
      const owner = await register(world.gateway);
      const { id, key } = await newKey(owner);
      expectError(await world.gateway.call('PATCH', `/console/keys/${id}`, { body: { status: 'disabled' } }), 401);
      expectError(await world.gateway.call('DELETE', `/console/keys/${id}`), 401);
      expectError(await world.gateway.call('DELETE', `/console/keys/${id}`, { token: key }), 401);
      expect((await models(key)).status).toBe(200);
    });
  });
});
