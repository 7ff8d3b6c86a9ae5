import { eventually, expectError, register } from 'test/e2e/e2e-helpers';
import { HttpResult, TestGateway } from 'test/support/gateway';

/** Two API processes on one Postgres and one Redis, as in production. */
describe('API key changes across API processes', () => {
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    [a, b] = await Promise.all([TestGateway.start(), TestGateway.start()]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  const PROPAGATION_MS = 1_000;

  async function keyUsedOnB(): Promise<{ token: string; id: string; key: string }> {
    const owner = await register(a);
    const created = await a.call('POST', '/console/keys', { token: owner.token, body: { name: 'shared' } });
    expect(created.status).toBe(201);
    // B answers from its own cache from now on.
    for (let i = 0; i < 3; i++) {
      expect((await b.call('GET', '/v1/models', { token: created.body.key })).status).toBe(200);
    }
    return { token: owner.token, id: created.body.id, key: created.body.key };
  }

  /** Polls B until it answers `status`, and returns the last answer and how long after `since` it came. */
  async function waitOnB(key: string, status: number, since: number): Promise<{ last: HttpResult; ms: number }> {
    const last = await eventually(
      () => b.call('GET', '/v1/models', { token: key }),
      (response) => response.status === status,
      PROPAGATION_MS,
      10,
    );
    return { last, ms: Date.now() - since };
  }

  it('should make a key disabled on one process answer 403 on another within a second', async () => {
    const { token, id, key } = await keyUsedOnB();

    const patched = await a.call('PATCH', `/console/keys/${id}`, { token, body: { status: 'disabled' } });
    const since = Date.now();
    expect(patched.status).toBe(200);

    const { last, ms } = await waitOnB(key, 403, since);
    expectError(last, 403, { code: 'api_key_disabled' });
    expect(ms).toBeLessThanOrEqual(PROPAGATION_MS + 100);
    // And it stays disabled.
    expectError(await b.call('GET', '/v1/models', { token: key }), 403, { code: 'api_key_disabled' });
  });

  it('should make a key enabled again on one process work on another within a second', async () => {
    const { token, id, key } = await keyUsedOnB();
    expect((await a.call('PATCH', `/console/keys/${id}`, { token, body: { status: 'disabled' } })).status).toBe(200);
    const disabled = await waitOnB(key, 403, Date.now());
    expect(disabled.last.status).toBe(403);

    const patched = await a.call('PATCH', `/console/keys/${id}`, { token, body: { status: 'enabled' } });
    const since = Date.now();
    expect(patched.status).toBe(200);

    const { last, ms } = await waitOnB(key, 200, since);
    expect(last.status).toBe(200);
    expect(ms).toBeLessThanOrEqual(PROPAGATION_MS + 100);
  });

  it('should make a key deleted on one process answer 401 on another within a second', async () => {
    const { token, id, key } = await keyUsedOnB();

    const deleted = await a.call('DELETE', `/console/keys/${id}`, { token });
    const since = Date.now();
    expect(deleted.status).toBe(204);

    const { last, ms } = await waitOnB(key, 401, since);
    expectError(last, 401, { code: 'invalid_api_key' });
    expect(ms).toBeLessThanOrEqual(PROPAGATION_MS + 100);
    expectError(await b.call('GET', '/v1/models', { token: key }), 401, { code: 'invalid_api_key' });
  });

  it('should make a key disabled through one process unusable on both', async () => {
    const { token, id, key } = await keyUsedOnB();
    expect((await a.call('GET', '/v1/models', { token: key })).status).toBe(200);

    expect((await b.call('PATCH', `/console/keys/${id}`, { token, body: { status: 'disabled' } })).status).toBe(200);
    const since = Date.now();

    const onA = await eventually(
      () => a.call('GET', '/v1/models', { token: key }),
      (response) => response.status === 403,
      PROPAGATION_MS,
      10,
    );
    expectError(onA, 403, { code: 'api_key_disabled' });
    expect(Date.now() - since).toBeLessThanOrEqual(PROPAGATION_MS + 100);
    expectError(await b.call('GET', '/v1/models', { token: key }), 403, { code: 'api_key_disabled' });
  });

  it('should accept a console session issued by one process on the other', async () => {
    const owner = await register(a);
    const response = await b.call('GET', '/console/account', { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.body.id).toBe(owner.account.id);
  });
});
