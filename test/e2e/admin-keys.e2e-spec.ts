import { randomUUID } from 'node:crypto';
import { eventually, expectError } from 'test/e2e/e2e-helpers';
import { HttpResult, TestGateway } from 'test/support/gateway';

/** Two API processes on one Postgres and one Redis: what an operator does on A holds on B at once. */
describe('operators and customer keys (GET/POST/DELETE /admin/keys)', () => {
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    [a, b] = await Promise.all([TestGateway.start(), TestGateway.start()]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  const PROPAGATION_MS = 1_000;
  const models = (gateway: TestGateway, key: string) => gateway.call('GET', '/v1/models', { token: key });

  /** A customer whose key B has answered (so B holds it in its cache). */
  async function customerCachedOnB() {
    const customer = await a.newCustomer();
    for (let i = 0; i < 3; i++) {
      expect((await models(b, customer.key)).status).toBe(200);
    }
    return customer;
  }

  async function waitOnB(key: string, status: number): Promise<{ last: HttpResult; ms: number }> {
    const since = Date.now();
    const last = await eventually(
      () => models(b, key),
      (response) => response.status === status,
      PROPAGATION_MS,
      10,
    );
    return { last, ms: Date.now() - since };
  }

  const auditOf = async (keyId: string) =>
    (await a.admin('GET', `/admin/audit?targetType=api_key&targetId=${keyId}`)).body.data as Record<string, any>[];

  it('should refuse a key an operator disabled at once on every process, and show the owner who did', async () => {
    const customer = await customerCachedOnB();

    const disabled = await a.admin('POST', `/admin/keys/${customer.keyId}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({
      id: customer.keyId,
      accountId: customer.accountId,
      status: 'disabled',
      disabledBy: 'operator',
    });
    expect(disabled.body).not.toHaveProperty('key');

    expectError(await models(a, customer.key), 403, { code: 'api_key_disabled' });
    const { last, ms } = await waitOnB(customer.key, 403);
    expectError(last, 403, { code: 'api_key_disabled' });
    expect(last.body.error.message).toContain('operator');
    expect(ms).toBeLessThanOrEqual(PROPAGATION_MS + 100);

    const [view] = (await b.call('GET', '/console/keys', { token: customer.token })).body.data;
    expect(view).toMatchObject({ id: customer.keyId, status: 'disabled', disabledBy: 'operator' });
  });

  it('should not let the owner enable (or re-disable) a key an operator disabled, but let them rename it', async () => {
    const customer = await customerCachedOnB();
    expect((await a.admin('POST', `/admin/keys/${customer.keyId}/disable`)).status).toBe(200);
    const patch = (body: unknown) =>
      b.call('PATCH', `/console/keys/${customer.keyId}`, { token: customer.token, body });

    expectError(await patch({ status: 'enabled' }), 409, { code: 'key_disabled_by_operator', param: 'status' });
    expectError(await patch({ status: 'disabled' }), 409, { code: 'key_disabled_by_operator' });
    expect(await patch({ name: 'renamed' })).toMatchObject({
      status: 200,
      body: { name: 'renamed', status: 'disabled', disabledBy: 'operator' },
    });
    expectError(await models(b, customer.key), 403, { code: 'api_key_disabled' });
  });

  it('should serve the key again on every process once an operator enables it', async () => {
    const customer = await customerCachedOnB();
    expect((await a.admin('POST', `/admin/keys/${customer.keyId}/disable`)).status).toBe(200);
    expect((await waitOnB(customer.key, 403)).last.status).toBe(403);

    const enabled = await a.admin('POST', `/admin/keys/${customer.keyId}/enable`);
    expect(enabled.body).toMatchObject({ status: 'enabled', disabledBy: null });
    const { last, ms } = await waitOnB(customer.key, 200);
    expect(last.status).toBe(200);
    expect(ms).toBeLessThanOrEqual(PROPAGATION_MS + 100);
    // The owner has their key back, to disable and enable as before.
    const patch = (status: string) =>
      a.call('PATCH', `/console/keys/${customer.keyId}`, { token: customer.token, body: { status } });
    expect((await patch('disabled')).body).toMatchObject({ status: 'disabled', disabledBy: 'owner' });
    expect((await patch('enabled')).body).toMatchObject({ status: 'enabled', disabledBy: null });
  });

  it('should let an operator disable a key its owner had disabled, taking the owner’s switch away', async () => {
    const customer = await a.newCustomer();
    const owner = (status: string) =>
      a.call('PATCH', `/console/keys/${customer.keyId}`, { token: customer.token, body: { status } });
    expect((await owner('disabled')).status).toBe(200);
    expect((await a.admin('POST', `/admin/keys/${customer.keyId}/disable`)).body.disabledBy).toBe('operator');
    expectError(await owner('enabled'), 409, { code: 'key_disabled_by_operator' });
  });

  it('should delete a key for good on every process (401), and then know it no more', async () => {
    const customer = await customerCachedOnB();

    expect((await a.admin('DELETE', `/admin/keys/${customer.keyId}`)).status).toBe(204);
    const { last, ms } = await waitOnB(customer.key, 401);
    expectError(last, 401, { code: 'invalid_api_key' });
    expect(ms).toBeLessThanOrEqual(PROPAGATION_MS + 100);
    expect((await a.call('GET', '/console/keys', { token: customer.token })).body.data).toEqual([]);
    expectError(await a.admin('POST', `/admin/keys/${customer.keyId}/enable`), 404, { param: 'keyId' });
    expectError(await a.admin('DELETE', `/admin/keys/${customer.keyId}`), 404, { param: 'keyId' });
  });

  it('should audit each change with the key’s state before and after, never its hash', async () => {
    const customer = await a.newCustomer();
    await a.admin('POST', `/admin/keys/${customer.keyId}/disable`);
    await a.admin('POST', `/admin/keys/${customer.keyId}/enable`);
    await a.admin('DELETE', `/admin/keys/${customer.keyId}`);

    const entries = await auditOf(customer.keyId);
    expect(entries.map((entry) => [entry.route, entry.outcome, entry.before?.status, entry.after?.status])).toEqual([
      ['/admin/keys/:keyId', 'applied', 'enabled', 'deleted'],
      ['/admin/keys/:keyId/enable', 'applied', 'disabled', 'enabled'],
      ['/admin/keys/:keyId/disable', 'applied', 'enabled', 'disabled'],
    ]);
    expect(entries[2]).toMatchObject({
      targetType: 'api_key',
      targetId: customer.keyId,
      after: { account_id: customer.accountId, disabled_by: 'operator' },
    });
    expect(JSON.stringify(entries)).not.toContain('key_hash');
  });

  it('should list keys newest first by account, prefix and status, a page at a time', async () => {
    const customer = await a.newCustomer();
    const second = await a.call('POST', '/console/keys', { token: customer.token, body: { name: 'second' } });
    const third = await a.call('POST', '/console/keys', { token: customer.token, body: { name: 'third' } });
    await a.admin('POST', `/admin/keys/${second.body.id}/disable`);

    const all = await a.admin('GET', `/admin/keys?accountId=${customer.accountId}`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((key: { id: string }) => key.id)).toEqual([third.body.id, second.body.id, customer.keyId]);
    expect(all.body.data[0]).toMatchObject({ accountId: customer.accountId, maskedKey: expect.stringMatching(/^sk-/) });
    expect(JSON.stringify(all.body)).not.toContain(customer.key);

    const disabled = await a.admin('GET', `/admin/keys?accountId=${customer.accountId}&status=disabled`);
    expect(disabled.body.data.map((key: { id: string }) => key.id)).toEqual([second.body.id]);

    const prefix = (third.body.key as string).slice(0, 7);
    const byPrefix = await a.admin('GET', `/admin/keys?prefix=${prefix}`);
    expect(byPrefix.body.data.map((key: { id: string }) => key.id)).toContain(third.body.id);
    expect(byPrefix.body.data.every((key: { maskedKey: string }) => key.maskedKey.startsWith(prefix))).toBe(true);

    const first = await a.admin('GET', `/admin/keys?accountId=${customer.accountId}&limit=2`);
    expect(first.body.data).toHaveLength(2);
    const next = await a.admin(
      'GET',
      `/admin/keys?accountId=${customer.accountId}&limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(next.body).toEqual({ data: [expect.objectContaining({ id: customer.keyId })], nextCursor: null });
  });

  it('should refuse bad filters, unknown keys and callers without the admin token', async () => {
    expectError(await a.admin('GET', '/admin/keys?prefix=sk_%25'), 400, { param: 'prefix' });
    expectError(await a.admin('GET', '/admin/keys?status=gone'), 400, { param: 'status' });
    expectError(await a.admin('GET', '/admin/keys?cursor=nope'), 400, { param: 'cursor' });
    expectError(await a.admin('POST', `/admin/keys/${randomUUID()}/disable`), 404, { param: 'keyId' });
    expectError(await a.admin('POST', '/admin/keys/not-a-uuid/disable'), 400, { param: 'keyId' });
    const customer = await a.newCustomer();
    expectError(await a.call('GET', '/admin/keys', { token: customer.token }), 401, { code: 'invalid_admin_token' });
  });
});
