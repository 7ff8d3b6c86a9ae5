import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CatalogService } from 'src/modules/models/catalog.service';
import { EffectiveLimits, RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { expectError, ISO_DATE_TIME, eventually } from 'test/e2e/e2e-helpers';
import {
  admissionEstimate,
  awayFromWindowEdge,
  expectRateLimited,
  rateLimitHeaders,
  userMessages,
} from 'test/e2e/rate-limits-helpers';
import { Customer, HttpResult, TestGateway } from 'test/support/gateway';

interface Override {
  rpm?: number | null;
  tpm?: number | null;
  endUserRpm?: number | null;
  endUserTpm?: number | null;
}

/**
 * Operators' per-account limits: `PUT/GET/DELETE /admin/accounts/{accountId}/rate-limits/{modelId}`
 * (`*`: every model), and the per end user limits (the request's `user` field) they can set.
 */
describe('per-account rate-limit overrides (admin)', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await TestGateway.start();
  });
  afterAll(() => gateway?.close());

  const path = (accountId: string, modelId?: string) =>
    `/admin/accounts/${accountId}/rate-limits${modelId === undefined ? '' : `/${modelId}`}`;
  const send = (customer: Customer, model: string, extra: Record<string, unknown> = {}) =>
    gateway.chat(customer.key, { model, messages: userMessages(), ...extra });
  const statuses = async (customer: Customer, model: string, count: number, extra: Record<string, unknown> = {}) => {
    const result: number[] = [];
    for (let i = 0; i < count; i++) {
      result.push((await send(customer, model, extra)).status);
    }
    return result;
  };

  /** Waits until this process applies `expected` (overrides reach every process over the invalidation bus). */
  async function applied(accountId: string, model: string, expected: Partial<EffectiveLimits>): Promise<void> {
    const catalogModel = gateway.app.get(CatalogService).get(model)!;
    const policy = gateway.app.get(RateLimitPolicy);
    const limits = await eventually(
      () => Promise.resolve(policy.limitsFor(accountId, catalogModel)),
      (current) => Object.entries(expected).every(([name, value]) => current[name as keyof EffectiveLimits] === value),
      3_000,
    );
    expect(limits).toMatchObject(expected);
  }

  async function put(accountId: string, modelId: string, body: Override): Promise<HttpResult> {
    const response = await gateway.admin('PUT', path(accountId, modelId), body);
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: expect.anything() });
    return response;
  }

  describe('overrides', () => {
    it('should store an override and answer with it', async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel({ rpm: 3 });

      const response = await gateway.admin('PUT', path(customer.accountId, model), { rpm: 1 });

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        accountId: customer.accountId,
        modelId: model,
        rpm: 1,
        tpm: null,
        endUserRpm: null,
        endUserTpm: null,
        updatedAt: expect.stringMatching(ISO_DATE_TIME),
      });
    });

    it("should apply an override to that account only; another account keeps the model's rpm", async () => {
      const limited = await gateway.newCustomer();
      const other = await gateway.newCustomer();
      const model = await gateway.addModel({ rpm: 3 });
      await put(limited.accountId, model, { rpm: 1 });
      await applied(limited.accountId, model, { rpm: 1 });

      const first = await send(limited, model);
      expect(first.status).toBe(200);
      expect(rateLimitHeaders(first, 'requests')).toMatchObject({ limit: '1', remaining: '0' });
      expectRateLimited(await send(limited, model), {
        model,
        limit: 'requests per minute',
        max: 1,
        used: 1,
        requested: 1,
      });

      expect(await statuses(other, model, 3)).toEqual([200, 200, 200]);
      expectRateLimited(await send(other, model), { model, limit: 'requests per minute', max: 3, used: 3 });
    });

    it('should apply a tpm override to the token limit and its headers', async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel({ tpm: 1_000_000, maxOutputTokens: 1000 });
      await put(customer.accountId, model, { tpm: 100 });
      await applied(customer.accountId, model, { tpm: 100 });
      await awayFromWindowEdge(60_000, 3_000);

      const served = await send(customer, model, { max_tokens: 20 });
      expect(served.status).toBe(200);
      expect(rateLimitHeaders(served, 'tokens')).toMatchObject({
        limit: '100',
        remaining: String(100 - admissionEstimate(userMessages(), 20)),
      });
      expectRateLimited(await send(customer, model, { max_tokens: 200 }), {
        model,
        limit: 'tokens per minute',
        max: 100,
        requested: admissionEstimate(userMessages(), 200),
      });
    });

    it('should apply the `*` override to every model of the account', async () => {
      const customer = await gateway.newCustomer();
      const first = await gateway.addModel({ rpm: 5 });
      const second = await gateway.addModel({ rpm: 5 });

      const response = await gateway.admin('PUT', path(customer.accountId, '*'), { rpm: 1 });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: expect.objectContaining({ accountId: customer.accountId, modelId: '*', rpm: 1 }),
      });
      await applied(customer.accountId, first, { rpm: 1 });
      await applied(customer.accountId, second, { rpm: 1 });

      for (const model of [first, second]) {
        expect(await statuses(customer, model, 1)).toEqual([200]);
        expectRateLimited(await send(customer, model), { model, limit: 'requests per minute', max: 1, used: 1 });
      }
      // Another account is not concerned.
      const other = await gateway.newCustomer();
      expect(await statuses(other, first, 2)).toEqual([200, 200]);
    });

    it('should prefer a model’s own override, falling back field by field to `*` and then the model', async () => {
      const customer = await gateway.newCustomer();
      const own = await gateway.addModel({ rpm: 5, tpm: 1_000_000 });
      const plain = await gateway.addModel({ rpm: 5, tpm: 1_000_000 });

      await put(customer.accountId, '*', { rpm: 1, endUserRpm: 7 });
      await put(customer.accountId, own, { rpm: 2, tpm: 5000 });
      await applied(customer.accountId, own, { rpm: 2, tpm: 5000, endUserRpm: 7 });
      await applied(customer.accountId, plain, { rpm: 1, tpm: 1_000_000, endUserRpm: 7 });

      expect(await statuses(customer, own, 3)).toEqual([200, 200, 429]);
      expect(await statuses(customer, plain, 2)).toEqual([200, 429]);
    });

    it('should replace an override as a whole on PUT (absent fields go back to null)', async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel();
      await put(customer.accountId, model, { rpm: 1, tpm: 100, endUserRpm: 1, endUserTpm: 50 });

      const replaced = await put(customer.accountId, model, { tpm: 200 });

      expect(replaced.body).toMatchObject({ rpm: null, tpm: 200, endUserRpm: null, endUserTpm: null });
    });

    const row = (accountId: string, modelId: string, values: Override) => ({
      accountId,
      modelId,
      rpm: null,
      tpm: null,
      endUserRpm: null,
      endUserTpm: null,
      ...values,
      updatedAt: expect.stringMatching(ISO_DATE_TIME),
    });

    it("should list an account's overrides, by model id", async () => {
      const customer = await gateway.newCustomer();
      const models = [await gateway.addModel(), await gateway.addModel()];
      const empty = await gateway.admin('GET', path(customer.accountId));
      expect({ status: empty.status, body: empty.body }).toEqual({ status: 200, body: { data: [] } });

      await put(customer.accountId, models[0], { rpm: 4, endUserTpm: 9 });
      await put(customer.accountId, models[1], { tpm: 1234 });
      // Another account's overrides are not listed.
      const other = await gateway.newCustomer();
      await put(other.accountId, models[0], { rpm: 9 });

      const listed = await gateway.admin('GET', path(customer.accountId));

      expect(listed.status).toBe(200);
      const expected = [
        row(customer.accountId, models[0], { rpm: 4, endUserTpm: 9 }),
        row(customer.accountId, models[1], { tpm: 1234 }),
      ].sort((a, b) => (a.modelId < b.modelId ? -1 : 1));
      expect(listed.body).toEqual({ data: expected });
    });

    it('should list the `*` override with the others', async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel();
      await put(customer.accountId, model, { rpm: 4 });
      await put(customer.accountId, '*', { tpm: 1234 });

      const listed = await gateway.admin('GET', path(customer.accountId));

      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({
        data: [row(customer.accountId, '*', { tpm: 1234 }), row(customer.accountId, model, { rpm: 4 })],
      });
    });

    it("should restore the model's default on DELETE (204), and 404 when there is nothing to delete", async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel({ rpm: 3 });
      await put(customer.accountId, model, { rpm: 1 });
      await applied(customer.accountId, model, { rpm: 1 });
      expect(await statuses(customer, model, 2)).toEqual([200, 429]);

      const deleted = await gateway.admin('DELETE', path(customer.accountId, model));
      expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 204, text: '' });
      await applied(customer.accountId, model, { rpm: 3 });

      // The window still holds the one request served: two more fit under the default of 3.
      const again = await send(customer, model);
      expect(rateLimitHeaders(again, 'requests')).toMatchObject({ limit: '3', remaining: '1' });
      expect(await statuses(customer, model, 2)).toEqual([200, 429]);
      expect((await gateway.admin('GET', path(customer.accountId))).body).toEqual({ data: [] });

      expectError(await gateway.admin('DELETE', path(customer.accountId, model)), 404, { code: 'not_found' });
    });

    it('should delete the `*` override', async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel({ rpm: 5 });
      await put(customer.accountId, '*', { rpm: 1 });
      await applied(customer.accountId, model, { rpm: 1 });

      const deleted = await gateway.admin('DELETE', path(customer.accountId, '*'));

      expect(deleted.status).toBe(204);
      await applied(customer.accountId, model, { rpm: 5 });
    });
  });

  describe('validation', () => {
    let customer: Customer;
    let model: string;

    beforeAll(async () => {
      customer = await gateway.newCustomer();
      model = await gateway.addModel();
    });

    it.each([
      ['rpm 0', { rpm: 0 }, 'rpm'],
      ['rpm -5', { rpm: -5 }, 'rpm'],
      ["rpm 'x'", { rpm: 'x' }, 'rpm'],
      ["rpm '10' (a string)", { rpm: '10' }, 'rpm'],
      ['rpm 1.5', { rpm: 1.5 }, 'rpm'],
      ['tpm 0', { tpm: 0 }, 'tpm'],
      ['endUserRpm 0', { endUserRpm: 0 }, 'endUserRpm'],
      ['endUserTpm true', { endUserTpm: true }, 'endUserTpm'],
      ['an unknown field', { rpm: 1, burst: 5 }, 'burst'],
    ])('should answer 400 to %s, naming the field', async (_name, body, param) => {
      const response = await gateway.admin('PUT', path(customer.accountId, model), body);

      expectError(response, 400, { code: null, param });
      expect((await gateway.admin('GET', path(customer.accountId))).body).toEqual({ data: [] });
    });

    it('should answer 404 for an unknown account', async () => {
      const unknown = randomUUID();

      expectError(await gateway.admin('PUT', path(unknown, model), { rpm: 1 }), 404, { code: 'not_found' });
      expectError(await gateway.admin('GET', path(unknown)), 404, { code: 'not_found' });
      expectError(await gateway.admin('DELETE', path(unknown, model)), 404, { code: 'not_found' });
    });

    it('should answer 400 naming accountId for an id that is not a UUID', async () => {
      for (const response of [
        await gateway.admin('PUT', path('not-a-uuid', model), { rpm: 1 }),
        await gateway.admin('GET', path('not-a-uuid')),
        await gateway.admin('DELETE', path('not-a-uuid', model)),
      ]) {
        expectError(response, 400, { code: null, param: 'accountId' });
      }
    });

    it('should answer 400 naming modelId for a malformed model id', async () => {
      const response = await gateway.admin('PUT', path(customer.accountId, encodeURIComponent('bad model!')), {
        rpm: 1,
      });

      expectError(response, 400, { code: null, param: 'modelId' });
    });

    it('should require the admin token', async () => {
      const anonymous = await gateway.call('PUT', path(customer.accountId, model), { body: { rpm: 1 } });
      const customerKey = await gateway.call('GET', path(customer.accountId), { token: customer.key });

      expectError(anonymous, 401);
      expectError(customerKey, 401);
    });

    it('should describe the endpoints in openapi.json', () => {
      const document = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8'));

      expect(Object.keys(document.paths['/admin/accounts/{accountId}/rate-limits'])).toEqual(['get']);
      expect(Object.keys(document.paths['/admin/accounts/{accountId}/rate-limits/{modelId}']).sort()).toEqual([
        'delete',
        'put',
      ]);
      const upsert = document.paths['/admin/accounts/{accountId}/rate-limits/{modelId}'].put;
      expect(upsert.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(['accountId', 'modelId']);
      expect(upsert.requestBody.content['application/json'].schema.$ref).toBe(
        '#/components/schemas/RateLimitUpsertDto',
      );
      expect(Object.keys(document.components.schemas.RateLimitUpsertDto.properties).sort()).toEqual([
        'endUserRpm',
        'endUserTpm',
        'rpm',
        'tpm',
      ]);
      expect(document.paths['/admin/accounts/{accountId}/rate-limits/{modelId}'].delete.responses['204']).toBeDefined();
    });
  });

  describe('end-user limits', () => {
    it('should limit each end user to endUserRpm while other users and requests without user are served', async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel({ rpm: 100 });
      await put(customer.accountId, model, { endUserRpm: 2 });
      await applied(customer.accountId, model, { endUserRpm: 2 });
      const upstreamBefore = gateway.mock.requests.length;

      expect(await statuses(customer, model, 2, { user: 'alice' })).toEqual([200, 200]);
      const limited = await send(customer, model, { user: 'alice' });

      expectRateLimited(limited, {
        model,
        limit: 'requests per minute',
        max: 2,
        used: 2,
        requested: 1,
        endUser: 'alice',
      });
      expect(gateway.mock.requests.length).toBe(upstreamBefore + 2);
      expect(await statuses(customer, model, 3, { user: 'bob' })).toEqual([200, 200, 429]);
      expect(await statuses(customer, model, 3)).toEqual([200, 200, 200]);
      expect(await statuses(customer, model, 3, { user: '' })).toEqual([200, 200, 200]);
      // End users are counted per account: another account's alice has her own window (and no limit).
      const other = await gateway.newCustomer();
      expect(await statuses(other, model, 3, { user: 'alice' })).toEqual([200, 200, 200]);
    });

    it("should not use up the account's requests per minute with requests refused for an end user", async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel({ rpm: 4 });
      await put(customer.accountId, model, { endUserRpm: 1 });
      await applied(customer.accountId, model, { endUserRpm: 1 });

      // alice: 1 served, 3 refused for her own limit; then the account still has 3 of its 4.
      expect(await statuses(customer, model, 4, { user: 'alice' })).toEqual([200, 429, 429, 429]);
      expect(await statuses(customer, model, 3)).toEqual([200, 200, 200]);
      const limited = await send(customer, model);
      expectRateLimited(limited, { model, limit: 'requests per minute', max: 4, used: 4, requested: 1 });
    });

    it('should limit each end user to endUserTpm, naming the end user', async () => {
      const customer = await gateway.newCustomer();
      const model = await gateway.addModel({ tpm: 1_000_000, maxOutputTokens: 1000 });
      await put(customer.accountId, model, { endUserTpm: 100 });
      await applied(customer.accountId, model, { endUserTpm: 100 });
      await awayFromWindowEdge(60_000, 3_000);
      // alice's first request really uses 13 tokens; the second one's estimate (90) no longer fits in 100.
      expect((await send(customer, model, { user: 'alice', max_tokens: 60 })).status).toBe(200);
      const limited = await send(customer, model, { user: 'alice', max_tokens: 80 });

      expectRateLimited(limited, {
        model,
        limit: 'tokens per minute',
        max: 100,
        requested: admissionEstimate(userMessages(), 80),
        endUser: 'alice',
      });
      expect((await send(customer, model, { user: 'bob', max_tokens: 80 })).status).toBe(200);
      expect((await send(customer, model, { max_tokens: 80 })).status).toBe(200);
    });
  });
});
