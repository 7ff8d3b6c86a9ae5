import { eventually, expectError, register } from 'test/e2e/e2e-helpers';
import { TestGateway } from 'test/support/gateway';

describe('GET /console/models', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await TestGateway.start();
  });
  afterAll(() => gateway.close());

  const listModels = (token: string) => gateway.call('GET', '/console/models', { token });

  it("should list each enabled model with its prices (cache prices defaulting to the input price), vision, output cap and the account's own limits", async () => {
    const cheap = await gateway.addModel({
      id: 'a-cheap-model',
      inputPrice: '0.15',
      outputPrice: '0.6',
      cachedInputPrice: '0.075',
      cacheWriteInputPrice: '0.1875',
      maxOutputTokens: 16384,
      vision: true,
      rpm: 60,
      tpm: 100_000,
    });
    const exact = await gateway.addModel({ id: 'b-exact-model', inputPrice: '0.000000001', outputPrice: '1000000' });
    await gateway.addModel({ id: 'c-disabled-model', enabled: false });
    const owner = await register(gateway);
    const other = await register(gateway);
    const override = await gateway.admin('PUT', `/admin/accounts/${owner.account.id}/rate-limits/${cheap}`, {
      rpm: 5,
      tpm: 777,
    });
    expect(override.status).toBe(200);

    const response = await eventually(
      () => listModels(owner.token),
      (answer) => answer.body.data?.[0]?.rpm === 5,
      5_000,
    );

    expect(response.status).toBe(200);
    const ids = response.body.data.map((model: { id: string }) => model.id);
    expect(ids).not.toContain('c-disabled-model');
    expect(ids.slice(0, 2)).toEqual([cheap, exact]);
    expect(response.body.data.slice(0, 2)).toEqual([
      {
        id: cheap,
        inputPrice: '0.15',
        outputPrice: '0.6',
        cachedInputPrice: '0.075',
        cacheWriteInputPrice: '0.1875',
        vision: true,
        maxOutputTokens: 16384,
        rpm: 5,
        tpm: 777,
      },
      {
        id: exact,
        inputPrice: '0.000000001',
        outputPrice: '1000000',
        // No cache prices of its own: the input price.
        cachedInputPrice: '0.000000001',
        cacheWriteInputPrice: '0.000000001',
        vision: false,
        maxOutputTokens: 1000,
        rpm: 1000,
        tpm: 10_000_000,
      },
    ]);
    // The override is the owner's only: another account sees the model's defaults.
    const others = (await listModels(other.token)).body.data;
    expect(others.find((model: { id: string }) => model.id === cheap)).toMatchObject({ rpm: 60, tpm: 100_000 });
  });

  it('should answer 401 without a console session, and to an API key', async () => {
    expectError(await gateway.call('GET', '/console/models'), 401);
    const customer = await gateway.newCustomer();
    expectError(await listModels(customer.key), 401);
  });
});
