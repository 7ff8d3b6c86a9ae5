import { randomUUID } from 'node:crypto';
import { expectError } from 'test/e2e/e2e-helpers';
import { TestGateway } from 'test/support/gateway';

const OPS_TOKEN = `ops-token-${randomUUID()}`;
const FINANCE_TOKEN = `finance-token-${randomUUID()}`;

/** Every admin change is logged with who made it (the token's name), before and after, and never a secret. */
describe('admin: the audit log', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await TestGateway.start({ ADMIN_TOKENS: `ops:${OPS_TOKEN},finance:${FINANCE_TOKEN}` });
  });
  afterAll(() => gateway.close());

  const as = (token: string, method: string, path: string, body?: unknown) =>
    gateway.call(method, path, { token, body });
  const auditOf = async (query: string) => {
    const response = await gateway.admin('GET', `/admin/audit?${query}`);
    expect(response.status).toBe(200);
    return response.body.data as Record<string, any>[];
  };

  it('should log channel changes with the actor, before and after, and only that the upstream key changed', async () => {
    const channelId = `audited-${randomUUID().slice(0, 8)}`;
    // Each key ends in letters outside the hex alphabet, so its last four (a masked key's hint) cannot
    // turn up by chance in the ids and hashes of other files' entries.
    const firstKey = `upstream-secret-${randomUUID()}-qzKw`;
    const secondKey = `upstream-secret-${randomUUID()}-xvJy`;
    const channel = (apiKey: string, priority: number) => ({
      type: 'openai',
      baseUrl: `${gateway.mock.url}/v1`,
      apiKey,
      priority,
      weight: 1,
      enabled: true,
    });

    expect((await as(OPS_TOKEN, 'PUT', `/admin/channels/${channelId}`, channel(firstKey, 0))).status).toBe(200);
    expect((await as(FINANCE_TOKEN, 'PUT', `/admin/channels/${channelId}`, channel(firstKey, 3))).status).toBe(200);
    expect((await as(OPS_TOKEN, 'PUT', `/admin/channels/${channelId}`, channel(secondKey, 3))).status).toBe(200);
    expect((await as(OPS_TOKEN, 'DELETE', `/admin/channels/${channelId}`)).status).toBe(204);

    const entries = await auditOf(`targetType=channel&targetId=${channelId}`);
    // Newest first.
    expect(entries.map((entry) => [entry.actor, entry.method, entry.outcome, entry.status])).toEqual([
      ['ops', 'DELETE', 'applied', 204],
      ['ops', 'PUT', 'applied', 200],
      ['finance', 'PUT', 'applied', 200],
      ['ops', 'PUT', 'applied', 200],
    ]);
    const [deleted, rekeyed, reprioritized, created] = entries;
    expect(created).toMatchObject({ route: '/admin/channels/:channelId', before: null, secretsChanged: ['apiKey'] });
    expect(created.after).toMatchObject({ id: channelId, priority: 0, enabled: true });
    expect(reprioritized).toMatchObject({ before: { priority: 0 }, after: { priority: 3 }, secretsChanged: [] });
    expect(rekeyed).toMatchObject({ before: { priority: 3 }, after: { priority: 3 }, secretsChanged: ['apiKey'] });
    expect(deleted).toMatchObject({ before: { id: channelId }, after: null });
    expect(entries.every((entry) => entry.at && entry.targetId === channelId)).toBe(true);

    // The last 200 entries hold other files' too (a channel of theirs may be named `ch-sealed-…`): look
    // for the sealed column itself, by either spelling, not for the bare word.
    const everything = JSON.stringify(await auditOf('limit=200'));
    const sealedColumn = ['api_key_sealed', 'apiKeySealed'];
    for (const secret of [
      firstKey,
      secondKey,
      firstKey.slice(-4),
      secondKey.slice(-4),
      OPS_TOKEN,
      FINANCE_TOKEN,
      ...sealedColumn,
    ]) {
      expect(everything).not.toContain(secret);
    }
  });

  it('should log changes of models, accounts and payment settings, refused ones too, filtered by actor and target', async () => {
    const modelId = await gateway.addModel();
    const account = await gateway.newCustomer({ balance: '0' });

    const adjusted = await as(FINANCE_TOKEN, 'POST', `/admin/accounts/${account.accountId}/adjustments`, {
      amount: '12.5',
      reason: 'goodwill',
    });
    expect(adjusted.status).toBe(201);
    const suspended = await as(OPS_TOKEN, 'POST', `/admin/accounts/${account.accountId}/suspend`, { reason: 'abuse' });
    expect(suspended.status).toBe(200);
    const refused = await as(FINANCE_TOKEN, 'POST', `/admin/accounts/${account.accountId}/adjustments`, {
      amount: '-100',
      reason: 'too much',
    });
    expect(refused.status).toBe(400);
    const settings = await as(FINANCE_TOKEN, 'PUT', '/admin/payments/settings', {
      cnyPerUsd: '7.2',
      minTopupUsd: '1',
      maxTopupUsd: '1000',
      orderTtlMinutes: 30,
    });
    expect(settings.status).toBe(200);

    const accountEntries = await auditOf(`targetType=account&targetId=${account.accountId}`);
    expect(accountEntries.map((entry) => [entry.actor, entry.route, entry.outcome, entry.status])).toEqual([
      ['finance', '/admin/accounts/:accountId/adjustments', 'failed', 400],
      ['ops', '/admin/accounts/:accountId/suspend', 'applied', 200],
      ['finance', '/admin/accounts/:accountId/adjustments', 'applied', 201],
    ]);
    const [failed, suspension, credit] = accountEntries;
    expect(credit.before).toMatchObject({ balance: '0' });
    expect(credit.after).toMatchObject({ balance: '12500000000' });
    expect(suspension.before).toMatchObject({ suspended_at: null });
    expect(suspension.after).toMatchObject({ suspended_at: expect.any(String), suspension_reason: 'abuse' });
    expect(failed.after).toBeNull();
    expect(JSON.stringify(accountEntries)).not.toContain('password');

    const model = await auditOf(`targetType=model&targetId=${modelId}`);
    expect(model).toEqual([expect.objectContaining({ actor: 'default', before: null })]);
    expect(model[0].after.routes).toEqual([expect.objectContaining({ upstream_model: 'mock-gpt' })]);

    const byFinance = await auditOf('actor=finance&targetType=payment_settings');
    expect(byFinance[0]).toMatchObject({ targetId: null, after: { cny_per_usd: '7.2', order_ttl_minutes: 30 } });

    const firstPage = await gateway.admin('GET', '/admin/audit?actor=finance&limit=1');
    expect(firstPage.body.data).toHaveLength(1);
    const secondPage = await gateway.admin(
      'GET',
      `/admin/audit?actor=finance&limit=1&cursor=${firstPage.body.nextCursor}`,
    );
    expect(Number(secondPage.body.data[0].id)).toBeLessThan(Number(firstPage.body.data[0].id));
  });

  it('should log redemption codes made, never the codes', async () => {
    const made = await as(OPS_TOKEN, 'POST', '/admin/redemption-codes', { amount: '5', count: 2 });
    expect(made.status).toBe(201);
    const [entry] = await auditOf('targetType=redemption_codes&actor=ops');
    expect(entry).toMatchObject({ before: null, after: null, outcome: 'applied', status: 201 });
    const everything = JSON.stringify(await auditOf('limit=200'));
    for (const { code } of made.body.data as { code: string }[]) {
      expect(everything).not.toContain(code);
    }
  });

  it('should refuse a token nobody configured, and bad filters', async () => {
    expectError(await as('not-a-configured-token-0000', 'GET', '/admin/audit'), 401, { code: 'invalid_admin_token' });
    expectError(await gateway.admin('GET', '/admin/audit?cursor=nope'), 400, { param: 'cursor' });
    expectError(await gateway.admin('GET', '/admin/audit?from=2026-13-01'), 400, { param: 'from' });
  });
});
