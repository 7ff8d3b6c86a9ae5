import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { CatalogService } from 'src/modules/models/catalog.service';
import { eventually, expectError } from 'test/e2e/e2e-helpers';
import { TestGateway } from 'test/support/gateway';

interface Entry {
  id: string;
  inputPrice: string;
  outputPrice: string;
  cachedInputPrice: string | null;
  cacheWriteInputPrice: string | null;
}

/** The catalog's prices as one document: export, dry run, apply in one transaction, and LiteLLM's file read exactly. */
describe('admin: price books', () => {
  let gateway: TestGateway;
  let other: TestGateway;
  let plain: string;
  let cached: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    // A second API process on the same database and Redis: the bulk apply must reach its catalog too.
    other = await TestGateway.start();
    plain = await gateway.addModel({ inputPrice: '2.5', outputPrice: '10' });
    cached = await gateway.addModel({
      inputPrice: '3',
      outputPrice: '15',
      cachedInputPrice: '0.3',
      cacheWriteInputPrice: '3.75',
    });
  });
  afterAll(async () => {
    await other.close();
    await gateway.close();
  });

  const exported = async (): Promise<Entry[]> => {
    const response = await gateway.admin('GET', '/admin/price-books');
    expect(response.status).toBe(200);
    return response.body.models as Entry[];
  };
  const mine = async () => (await exported()).filter((entry) => entry.id === plain || entry.id === cached);

  it('should export every model with its prices, and answer an unchanged import as a no-op', async () => {
    const book = await exported();
    expect(book.filter((entry) => entry.id === plain || entry.id === cached)).toEqual(
      [
        { id: plain, inputPrice: '2.5', outputPrice: '10', cachedInputPrice: null, cacheWriteInputPrice: null },
        { id: cached, inputPrice: '3', outputPrice: '15', cachedInputPrice: '0.3', cacheWriteInputPrice: '3.75' },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );

    const dryRun = await gateway.admin('POST', '/admin/price-books?dryRun=true', { models: book });
    expect(dryRun.status).toBe(200);
    expect(dryRun.body).toEqual({ dryRun: true, changed: [], unchanged: book.length, unknown: [] });
    const applied = await gateway.admin('POST', '/admin/price-books', { models: book });
    expect(applied.body).toMatchObject({ dryRun: false, changed: [], unknown: [] });
  });

  it('should answer a dry run with the diff and change nothing, then apply the same book everywhere', async () => {
    const before = await mine();
    const book = {
      models: [
        { id: plain, inputPrice: '2.5', outputPrice: '12.000000001' },
        { id: cached, inputPrice: '3', outputPrice: '15', cachedInputPrice: '0.3', cacheWriteInputPrice: '3.75' },
        { id: `nowhere-${randomUUID().slice(0, 8)}`, inputPrice: '1', outputPrice: '1' },
      ],
    };
    const expectedDiff = {
      changed: [
        {
          id: plain,
          before: { inputPrice: '2.5', outputPrice: '10', cachedInputPrice: null, cacheWriteInputPrice: null },
          after: { inputPrice: '2.5', outputPrice: '12.000000001', cachedInputPrice: null, cacheWriteInputPrice: null },
        },
      ],
      unchanged: 1,
      unknown: [book.models[2].id],
    };

    const dryRun = await gateway.admin('POST', '/admin/price-books?dryRun=true', book);
    expect(dryRun.status).toBe(200);
    expect(dryRun.body).toEqual({ dryRun: true, ...expectedDiff });
    expect(await mine()).toEqual(before);

    const applied = await gateway.admin('POST', '/admin/price-books', book);
    expect(applied.status).toBe(200);
    expect(applied.body).toEqual({ dryRun: false, ...expectedDiff });
    expect((await mine()).find((entry) => entry.id === plain)?.outputPrice).toBe('12.000000001');
    // The unknown model was not created.
    expect((await exported()).some((entry) => entry.id === book.models[2].id)).toBe(false);
    // Both processes' in-memory catalogs (what /v1 bills from) have the new price.
    for (const process of [gateway, other]) {
      const price = await eventually(
        () => Promise.resolve(process.app.get(CatalogService).get(plain)?.outputPrice),
        (value) => value === 12_000_000_001n,
        5_000,
      );
      expect(price).toBe(12_000_000_001n);
    }
    const audit = await gateway.admin('GET', '/admin/audit?targetType=price_book&limit=5');
    expect(audit.body.data[0]).toMatchObject({
      method: 'POST',
      route: '/admin/price-books',
      outcome: 'applied',
      actorRole: 'admin',
    });
  });

  it("should import LiteLLM's file from the numbers as written, skipping models the catalog lacks", async () => {
    // 1.23456789e-7 per token is 0.123456789 per million: exact only if read from the literal.
    const file = `{
      "sample_spec": { "input_cost_per_token": 0.0, "max_tokens": "LEGACY parameter" },
      "${plain}": { "input_cost_per_token": 1.23456789e-7, "output_cost_per_token": 0.0000006,
                    "litellm_provider": "openai", "mode": "chat" },
      "${cached}": { "input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
                     "cache_read_input_token_cost": 3.0e-7, "cache_creation_input_token_cost": 3.75e-06 },
      "someone-elses-model": { "input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06 }
    }`;
    const dryRun = await gateway.call('POST', '/admin/price-books?format=litellm&dryRun=true', {
      token: gateway.adminToken,
      body: file,
    });
    expect(dryRun.status).toBe(200);
    expect(dryRun.body).toEqual({
      dryRun: true,
      changed: [
        {
          id: plain,
          before: {
            inputPrice: '2.5',
            outputPrice: '12.000000001',
            cachedInputPrice: null,
            cacheWriteInputPrice: null,
          },
          after: { inputPrice: '0.123456789', outputPrice: '0.6', cachedInputPrice: null, cacheWriteInputPrice: null },
        },
      ],
      unchanged: 1,
      unknown: ['someone-elses-model'],
    });
    const applied = await gateway.call('POST', '/admin/price-books?format=litellm', {
      token: gateway.adminToken,
      body: file,
    });
    expect(applied.status).toBe(200);
    expect((await mine()).find((entry) => entry.id === plain)).toMatchObject({
      inputPrice: '0.123456789',
      outputPrice: '0.6',
    });
  });

  it('should refuse a LiteLLM cost finer than the price precision with a 400 naming model and field, changing nothing', async () => {
    const before = await mine();
    // JSON.parse reads 1.0000000000000001e-5 as 1e-5; the literal is finer than a nano-dollar per million.
    const file = `{
      "${cached}": { "input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06 },
      "${plain}": { "input_cost_per_token": 1e-06, "output_cost_per_token": 1.0000000000000001e-5 }
    }`;
    const refused = await gateway.call('POST', '/admin/price-books?format=litellm', {
      token: gateway.adminToken,
      body: file,
    });
    expectError(refused, 400, { code: null, param: `${plain}.output_cost_per_token` });
    expect(refused.body.error.message).toContain(`Model '${plain}': output_cost_per_token 1.0000000000000001e-5`);
    expect(await mine()).toEqual(before);
  });

  it('should refuse a malformed gateway price book with a 400 naming the field, changing nothing', async () => {
    const before = await mine();
    const refused = await gateway.admin('POST', '/admin/price-books', {
      models: [
        { id: cached, inputPrice: '1', outputPrice: '1' },
        { id: plain, inputPrice: '1', outputPrice: '0.0000000001' },
      ],
    });
    expectError(refused, 400, { code: null, param: 'models[1].outputPrice' });
    expectError(await gateway.admin('POST', '/admin/price-books?format=csv', { models: [] }), 400, { param: 'format' });
    expect(await mine()).toEqual(before);
  });

  it("should refuse a caller without an operator's token from the headers, before reading a large body", async () => {
    // Three megabytes announced and never sent: only an answer made from the headers can arrive.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const sent = httpRequest(`${gateway.url}/admin/price-books`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer not-an-admin-token-0123456789',
          'content-type': 'application/json',
          'content-length': String(3 * 1024 * 1024),
        },
      });
      sent.on('response', (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          sent.destroy();
          resolve({ status: response.statusCode ?? 0, body });
        });
      });
      sent.on('error', reject);
      sent.flushHeaders();
    });

    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'invalid_admin_token' } });
  });
});
