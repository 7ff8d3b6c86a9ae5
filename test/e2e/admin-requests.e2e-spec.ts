import { randomUUID } from 'node:crypto';
import { expectError, useGatewayWorld } from 'test/e2e/e2e-helpers';

describe('the request log (GET /admin/requests) and the console bills filters', () => {
  const world = useGatewayWorld();

  /** Rows as settlement writes them, with the ids the relay fills in. */
  async function insert(row: {
    accountId: string;
    keyId: string;
    model: string;
    channel: string;
    status: string;
    at: Date;
  }) {
    const requestId = `req-${randomUUID()}`;
    const clientRequestId = `client-${randomUUID()}`;
    await world.db.query(
      `INSERT INTO usage_records (request_id, account_id, key_id, model_id, channel_id, prompt_tokens, completion_tokens,
         cached_tokens, cache_write_tokens, reasoning_tokens, cost, charged, usage_source, status, upstream_latency_ms,
         client_request_id, provider_request_id, first_byte_ms, created_at)
       VALUES ($1, $2, $3, $4, $5, 100, 20, 40, 0, 5, 1500000, 1200000, 'upstream', $6, 900, $7, $8, 120, $9)`,
      [
        requestId,
        row.accountId,
        row.keyId,
        row.model,
        row.channel,
        row.status,
        clientRequestId,
        `prov-${requestId}`,
        row.at,
      ],
    );
    return { requestId, clientRequestId };
  }

  it('should find requests by each filter, newest first, with their ids, tokens, money and timings', async () => {
    const customer = await world.gateway.newCustomer();
    const channel = `ch-${randomUUID().slice(0, 8)}`;
    const base = Date.now() - 60_000;
    const at = (seconds: number) => new Date(base + seconds * 1000);
    const first = await insert({ ...customer, model: 'log-model-a', channel, status: 'completed', at: at(1) });
    const second = await insert({ ...customer, model: 'log-model-b', channel, status: 'upstream_broken', at: at(2) });
    const third = await insert({ ...customer, model: 'log-model-a', channel, status: 'completed', at: at(3) });
    const ids = async (query: string) => {
      const response = await world.gateway.admin('GET', `/admin/requests?${query}`);
      expect(response.status).toBe(200);
      return (response.body.data as { requestId: string }[]).map((row) => row.requestId);
    };

    const all = await world.gateway.admin('GET', `/admin/requests?accountId=${customer.accountId}`);
    expect(all.body.data.map((row: { requestId: string }) => row.requestId)).toEqual([
      third.requestId,
      second.requestId,
      first.requestId,
    ]);
    expect(all.body.data[1]).toEqual({
      requestId: second.requestId,
      clientRequestId: second.clientRequestId,
      providerRequestId: `prov-${second.requestId}`,
      createdAt: at(2).toISOString(),
      accountId: customer.accountId,
      keyId: customer.keyId,
      model: 'log-model-b',
      channel,
      status: 'upstream_broken',
      promptTokens: 100,
      completionTokens: 20,
      cachedTokens: 40,
      cacheWriteTokens: 0,
      reasoningTokens: 5,
      usageSource: 'upstream',
      cost: '0.0015',
      charged: '0.0012',
      upstreamLatencyMs: 900,
      firstByteMs: 120,
    });
    expect(await ids(`requestId=${first.requestId}`)).toEqual([first.requestId]);
    expect(await ids(`clientRequestId=${second.clientRequestId}`)).toEqual([second.requestId]);
    expect(await ids(`keyId=${customer.keyId}&model=log-model-a`)).toEqual([third.requestId, first.requestId]);
    expect(await ids(`channel=${channel}&status=upstream_broken`)).toEqual([second.requestId]);
    expect(await ids(`channel=${channel}&from=${at(2).toISOString()}&to=${at(3).toISOString()}`)).toEqual([
      second.requestId,
    ]);
    const page = await world.gateway.admin('GET', `/admin/requests?channel=${channel}&limit=2`);
    const next = await world.gateway.admin(
      'GET',
      `/admin/requests?channel=${channel}&limit=2&cursor=${page.body.nextCursor}`,
    );
    expect(next.body).toMatchObject({ data: [{ requestId: first.requestId }], nextCursor: null });

    // The customer's own search: the same ids, no channel or cost price.
    const bills = async (query: string) =>
      (await world.gateway.call('GET', `/console/bills?${query}`, { token: customer.token })).body.data as Record<
        string,
        unknown
      >[];
    const [bill] = await bills(`clientRequestId=${second.clientRequestId}`);
    expect(bill).toMatchObject({
      requestId: second.requestId,
      clientRequestId: second.clientRequestId,
      cost: '0.0012',
    });
    expect(bill).not.toHaveProperty('channel');
    expect((await bills(`requestId=${third.requestId}`)).map((row) => row.requestId)).toEqual([third.requestId]);
    const stranger = await world.gateway.newCustomer();
    const theirs = await world.gateway.call('GET', `/console/bills?requestId=${third.requestId}`, {
      token: stranger.token,
    });
    expect(theirs.body.data).toEqual([]);
  });

  it('should refuse bad filters and callers without the admin token', async () => {
    expectError(await world.gateway.admin('GET', '/admin/requests?status=lost'), 400, { param: 'status' });
    expectError(await world.gateway.admin('GET', '/admin/requests?from=yesterday'), 400, { param: 'from' });
    expectError(
      await world.gateway.admin('GET', '/admin/requests?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z'),
      400,
      { param: 'from' },
    );
    expectError(await world.gateway.admin('GET', '/admin/requests?cursor=nope'), 400, { param: 'cursor' });
    const customer = await world.gateway.newCustomer();
    expectError(await world.gateway.call('GET', '/admin/requests', { token: customer.token }), 401, {
      code: 'invalid_admin_token',
    });
  });
});
