import { randomUUID } from 'node:crypto';
import { eventually, useGatewayWorld } from 'test/e2e/e2e-helpers';
import { Customer } from 'test/support/gateway';

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** A channel whose sealed key no longer decrypts (damaged row, or sealed under another SECRETS_KEY). */
describe('catalog: a channel key that cannot be decrypted', () => {
  const world = useGatewayWorld();
  let customer: Customer;

  beforeAll(async () => {
    customer = await world.gateway.newCustomer();
  });

  const putChannel = (id: string) =>
    world.gateway.admin('PUT', `/admin/channels/${id}`, {
      type: 'openai',
      baseUrl: `${world.gateway.mock.url}/v1`,
      apiKey: `upstream-secret-${randomUUID()}`,
      priority: 0,
      weight: 1,
      enabled: true,
    });
  const putModel = (id: string, channelIds: string[]) =>
    world.gateway.admin('PUT', `/admin/models/${id}`, {
      inputPrice: '2.5',
      outputPrice: '10',
      maxOutputTokens: 1000,
      vision: false,
      rpm: 1000,
      tpm: 1000000,
      enabled: true,
      routes: channelIds.map((channelId) => ({ channelId, upstreamModel: 'mock-gpt' })),
    });
  const servedModels = async (): Promise<string[]> => {
    const response = await world.gateway.call('GET', '/v1/models', { token: customer.key });
    expect(response.status).toBe(200);
    return response.body.data.map((model: { id: string }) => model.id).sort();
  };
  const chat = (model: string) =>
    world.gateway.chat(customer.key, { model, messages: [{ role: 'user', content: 'Hi' }] });
  const unreadableGauge = async () => {
    const text = (await world.gateway.call('GET', '/metrics')).text;
    return Number(/^gateway_catalog_unreadable_channels (\S+)$/m.exec(text)?.[1] ?? 'NaN');
  };

  it('should leave out only that channel, serve everything else, and take the channel back once its key is set', async () => {
    const [good, broken] = [unique('ch-good'), unique('ch-broken')];
    const [onGood, onBroken, onBoth] = [unique('m-good'), unique('m-broken'), unique('m-both')];
    for (const channel of [good, broken]) {
      expect((await putChannel(channel)).status).toBe(200);
    }
    expect((await putModel(onGood, [good])).status).toBe(200);
    expect((await putModel(onBroken, [broken])).status).toBe(200);
    expect((await putModel(onBoth, [broken, good])).status).toBe(200);
    const all = [onBoth, onBroken, onGood].sort();
    expect(await eventually(servedModels, (ids) => all.every((id) => ids.includes(id)), 5_000)).toEqual(
      expect.arrayContaining(all),
    );

    // The authentication tag no longer matches: decryption fails.
    await world.db.query(
      `UPDATE channels SET api_key_sealed = 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA==.AAAA' WHERE id = $1`,
      [broken],
    );
    // Any catalog change reloads the whole catalog.
    const added = unique('m-added');
    expect((await putModel(added, [good])).status).toBe(200);

    const served = await eventually(servedModels, (ids) => ids.includes(added), 5_000);
    expect(served).toEqual(expect.arrayContaining([onGood, onBoth, added]));
    expect(served).not.toContain(onBroken);
    expect((await chat(onGood)).status).toBe(200);
    expect((await chat(onBoth)).status).toBe(200);
    expect((await chat(added)).status).toBe(200);
    expect(await unreadableGauge()).toBe(1);

    expect((await putChannel(broken)).status).toBe(200);
    expect(await eventually(servedModels, (ids) => ids.includes(onBroken), 5_000)).toContain(onBroken);
    expect((await chat(onBroken)).status).toBe(200);
    expect(await unreadableGauge()).toBe(0);
  });
});
