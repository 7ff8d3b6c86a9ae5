import { ApiKeysRepository } from 'src/modules/api-keys/api-keys.repository';
import { eventually, expectError, openDb, register, Registered, useGatewayWorld } from 'test/e2e/e2e-helpers';

/** Key status changes that overlap other work on the same key. */
describe('API key status races', () => {
  const world = useGatewayWorld();

  const models = (key: string) => world.gateway.call('GET', '/v1/models', { token: key });
  const patchKey = (owner: Registered, id: string, status: string) =>
    world.gateway.call('PATCH', `/console/keys/${id}`, { token: owner.token, body: { status } });
  const deleteKey = (owner: Registered, id: string) =>
    world.gateway.call('DELETE', `/console/keys/${id}`, { token: owner.token });

  async function newKey(owner: Registered): Promise<{ id: string; key: string }> {
    const created = await world.gateway.call('POST', '/console/keys', { token: owner.token, body: { name: 'raced' } });
    expect(created.status).toBe(201);
    return { id: created.body.id, key: created.body.key };
  }

  /** Status updates of api_keys that are waiting for a row lock. */
  async function blockedStatusUpdates(): Promise<number> {
    const { rows } = await world.db.query<{ count: string }>(
      `SELECT count(*) FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'
          AND query ILIKE 'UPDATE "api_keys" SET "status"%'`,
    );
    return Number(rows[0].count);
  }

  it('should answer 404 to a PATCH that raced a DELETE, and leave the key deleted', async () => {
    const owner = await register(world.gateway);
    const { id, key } = await newKey(owner);
    expect((await models(key)).status).toBe(200);

    // Holding the row lock lines both writes up behind it: the DELETE first, then the PATCH.
    const lock = await openDb();
    await lock.query('BEGIN');
    await lock.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [id]);
    let deleting: ReturnType<typeof deleteKey> | undefined;
    let patching: ReturnType<typeof patchKey> | undefined;
    try {
      deleting = deleteKey(owner, id);
      expect(await eventually(blockedStatusUpdates, (n) => n === 1, 10_000)).toBe(1);
      patching = patchKey(owner, id, 'disabled');
      expect(await eventually(blockedStatusUpdates, (n) => n === 2, 10_000)).toBe(2);
    } finally {
      await lock.query('COMMIT');
      await lock.end();
    }

    expect((await deleting).status).toBe(204);
    expectError(await patching, 404);
    const { rows } = await world.db.query('SELECT status FROM api_keys WHERE id = $1', [id]);
    expect(rows).toEqual([{ status: 'deleted' }]);
    expectError(await models(key), 401, { code: 'invalid_api_key' });
  });

  it('should not keep a key status read that a status change overtook', async () => {
    const owner = await register(world.gateway);
    const { id, key } = await newKey(owner);
    // The real query runs and reads the key enabled; its answer reaches the cache late, as under load.
    const repository = world.gateway.app.get(ApiKeysRepository);
    const query = repository.findByHash.bind(repository);
    let readDone!: () => void;
    const read = new Promise<void>((resolve) => (readDone = resolve));
    let deliver!: () => void;
    const delivered = new Promise<void>((resolve) => (deliver = resolve));
    const spy = jest.spyOn(repository, 'findByHash').mockImplementationOnce(async (keyHash) => {
      const found = await query(keyHash);
      readDone();
      await delivered;
      return found;
    });
    try {
      const first = models(key);
      await read;
      expect((await patchKey(owner, id, 'disabled')).status).toBe(200);
      deliver();
      // Read before the change: this one request may still pass.
      expect((await first).status).toBe(200);
    } finally {
      deliver();
      spy.mockRestore();
    }

    expectError(await models(key), 403, { code: 'api_key_disabled' });
  });
});
