import { SecretBox } from 'src/common/crypto/secret-box';
import { ApiError } from 'src/common/errors/api-error';
import { metrics } from 'src/common/metrics/metrics';
import { AppConfig, loadConfig } from 'src/config/app-config';
import { SealedResponse, StoredResponsesRepository } from 'src/modules/responses/stored/stored-responses.repository';
import { StoredResponses } from 'src/modules/responses/stored/stored-responses.service';
import { mockOf, newTestLogger } from 'test/support/test-service';

const ACCOUNT = '00000000-0000-4000-8000-000000000001';
const MESSAGE = {
  id: 'msg_1',
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text: 'The answer is forty-two.', annotations: [], logprobs: [] }],
};
const CALL = { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'f', arguments: '{}' };
const RESPONSE = {
  id: 'resp_1',
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'm',
  instructions: 'secret instructions',
  output: [MESSAGE, CALL],
  usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 },
};

function setUp(responses: Partial<AppConfig['responses']> = {}) {
  const config = loadConfig({ NODE_ENV: 'test' });
  config.responses = { ...config.responses, ...responses };
  const repository = mockOf(StoredResponsesRepository);
  const saved: SealedResponse[] = [];
  repository.save.mockImplementation((response) => {
    saved.push(response);
    return Promise.resolve();
  });
  // The repository's account binding, as SQL does it: only the saved answers of the account asking.
  repository.liveItems.mockImplementation((accountId, ids) => {
    const items = saved.filter((r) => r.accountId === accountId).flatMap((r) => r.items);
    return Promise.resolve(new Map(items.filter((item) => ids.includes(item.id)).map((i) => [i.id, i.sealed])));
  });
  const logger = newTestLogger();
  const stored = new StoredResponses(repository, new SecretBox(Buffer.alloc(32, 1)), config, logger);
  return { stored, repository, saved, logger, config };
}

describe(StoredResponses.name, () => {
  it('should keep the output items and usage sealed, and nothing of the request', async () => {
    const { stored, saved } = setUp();

    await stored.keep(ACCOUNT, RESPONSE);

    expect(saved).toEqual([
      expect.objectContaining({ id: 'resp_1', accountId: ACCOUNT, items: [expect.anything(), expect.anything()] }),
    ]);
    const written = JSON.stringify(saved);
    // A phrase with a character base64 never has, so that no ciphertext can contain it by chance.
    expect(written).not.toContain('forty-two');
    expect(written).not.toContain('secret instructions');
    expect(saved[0].items.map((item) => item.id)).toEqual(['msg_1', 'fc_1']);
    const days = (saved[0].expiresAt.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeCloseTo(30, 1);
  });

  it('should replace each item_reference by the item it names, and leave the rest as sent', async () => {
    const { stored } = setUp();
    await stored.keep(ACCOUNT, RESPONSE);
    const input = [{ role: 'user', content: 'Hi' }, { type: 'item_reference', id: 'msg_1' }, CALL];

    const resolved = await stored.resolveReferences(ACCOUNT, input);

    expect(resolved).toEqual([{ role: 'user', content: 'Hi' }, MESSAGE, CALL]);
  });

  it('should refuse references whose items add up past the body limit with a 413, however short the request', async () => {
    const { stored, config } = setUp();
    const big = { ...MESSAGE, content: [{ type: 'output_text', text: 'x'.repeat(4_000) }] };
    await stored.keep(ACCOUNT, { ...RESPONSE, output: [big] });
    const references = (count: number) =>
      Array.from({ length: count }, () => ({ type: 'item_reference', id: 'msg_1' }));
    // A limit that two copies of the item fit under and three do not.
    config.bodyLimitBytes = 10_000;

    expect(await stored.resolveReferences(ACCOUNT, references(2))).toEqual([big, big]);
    const refused = await stored.resolveReferences(ACCOUNT, references(3)).catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 413, message: expect.stringContaining('input[2]') });
  });

  it('should read nothing for an input without references', async () => {
    const { stored, repository } = setUp();
    const input = [{ role: 'user', content: 'Hi' }];

    expect(await stored.resolveReferences(ACCOUNT, input)).toBe(input);
    expect(await stored.resolveReferences(ACCOUNT, 'Hi')).toBe('Hi');
    expect(repository.liveItems).not.toHaveBeenCalled();
  });

  it("should refuse a reference to another account's item, or an unknown one, with a 400 naming it", async () => {
    const { stored } = setUp();
    await stored.keep(ACCOUNT, RESPONSE);
    const other = '00000000-0000-4000-8000-000000000002';

    const refused = await stored
      .resolveReferences(other, [{ type: 'item_reference', id: 'msg_1' }])
      .catch((error: unknown) => error);
    const unknown = await stored
      .resolveReferences(ACCOUNT, [
        { role: 'user', content: 'Hi' },
        { type: 'item_reference', id: 'msg_nope' },
      ])
      .catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ param: 'input[0].id', message: expect.stringContaining("'msg_1'") });
    expect(unknown).toMatchObject({ param: 'input[1].id', message: expect.stringContaining("'msg_nope'") });
  });

  it('should take an item sealed under a replaced SECRETS_KEY as gone: a 400, and no answer to GET', async () => {
    const { stored, repository, saved, logger } = setUp();
    await stored.keep(ACCOUNT, RESPONSE);
    const config = loadConfig({ NODE_ENV: 'test' });
    const rekeyed = new StoredResponses(repository, new SecretBox(Buffer.alloc(32, 2)), config, logger);
    repository.find.mockResolvedValue({ sealed: saved[0].sealed, items: saved[0].items.map((i) => i.sealed) });

    const refused = await rekeyed
      .resolveReferences(ACCOUNT, [{ type: 'item_reference', id: 'msg_1' }])
      .catch((error: unknown) => error);

    expect(refused).toMatchObject({ param: 'input[0].id' });
    expect(await rekeyed.find(ACCOUNT, 'resp_1')).toBeNull();
    expect(await stored.find(ACCOUNT, 'resp_1')).toMatchObject({ id: 'resp_1', output: [MESSAGE, CALL] });
  });

  it('should leave references as sent where the deployment keeps nothing (the translation refuses them)', async () => {
    const { stored, repository } = setUp({ store: false });
    const input = [{ type: 'item_reference', id: 'msg_1' }];

    expect(await stored.resolveReferences(ACCOUNT, input)).toBe(input);
    expect(repository.liveItems).not.toHaveBeenCalled();
  });

  it('should log and count a keep that failed, without failing', async () => {
    const { stored, repository, logger } = setUp();
    repository.save.mockRejectedValueOnce(new Error('connection refused'));
    const before = (await metrics.responsesKeepFailures.get()).values[0]?.value ?? 0;

    await expect(stored.keep(ACCOUNT, RESPONSE)).resolves.toBeUndefined();

    expect((await metrics.responsesKeepFailures.get()).values[0]?.value).toBe(before + 1);
    expect(logger.warn).toHaveBeenCalledWith(
      { err: 'connection refused', responseId: 'resp_1' },
      expect.stringContaining('could not be kept'),
    );
  });

  it('should let a reference wait for the keep of its item still being written', async () => {
    const { stored, repository, saved } = setUp();
    let land = () => undefined as void;
    repository.save.mockImplementationOnce(
      (response) =>
        new Promise<void>((resolve) => {
          land = () => {
            saved.push(response);
            resolve();
          };
        }),
    );
    void stored.keep(ACCOUNT, RESPONSE);

    const resolving = stored.resolveReferences(ACCOUNT, [{ type: 'item_reference', id: 'msg_1' }]);
    land();

    expect(await resolving).toEqual([MESSAGE]);
  });
});
