import { formatUsd } from 'src/common/money/money';
import { CatalogService } from 'src/modules/models/catalog.service';
import { usageCost } from 'src/modules/billing/pricing';
import { countCompletionTokens, estimatePromptTokens } from 'src/modules/billing/token-estimator';
import {
  BillingWorld,
  Books,
  mockPieces,
  mockUsage,
  openBillingWorld,
  pricesOf,
  requestIdOf,
  sleep,
  userMessages,
} from 'test/e2e/billing-helpers';
import { expectApiError } from 'test/e2e/v1-helpers';
import { Customer, HttpResult, parseEventStream, TestGateway } from 'test/support/gateway';

const INPUT_PRICE = '2.5';
const OUTPUT_PRICE = '10';
const SHORT_MS = 300;

/**
 * Upstreams that misbehave, one API process: per-channel timeouts decide when a hang or a stall is
 * given up, the client sees the next route or an error, and the ledger shows what was billed.
 * Also the operator's side: timeouts and health in the channel list, deletes, auto-disable, metrics.
 */
describe('channel health: faults, timeouts and operator tools', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  const prices = pricesOf(INPUT_PRICE, OUTPUT_PRICE);

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE, {}, { BREAKER_OPEN_MS: '1000' });
    ({ gateway, books } = world);
  });
  afterEach(() => books.expectBalanced());
  afterAll(() => world.close());

  const healthy = () => `${gateway.mock.url}/v1`;

  async function putChannel(id: string, body: Record<string, unknown>): Promise<HttpResult> {
    return gateway.admin('PUT', `/admin/channels/${id}`, {
      type: 'openai',
      apiKey: 'upstream-secret-key-0123456789',
      ...body,
    });
  }

  /** A model over these channels, in this order of priority. */
  async function modelOver(...channels: { id: string; baseUrl: string; timeouts?: Record<string, number> }[]) {
    for (const [index, channel] of channels.entries()) {
      const put = await putChannel(channel.id, {
        baseUrl: channel.baseUrl,
        priority: channels.length - index,
        timeouts: channel.timeouts,
      });
      expect(put.status).toBe(200);
    }
    return gateway.addModel({
      inputPrice: INPUT_PRICE,
      outputPrice: OUTPUT_PRICE,
      routes: channels.map((channel) => ({ channelId: channel.id, upstreamModel: 'mock-gpt' })),
    });
  }

  async function channelListed(id: string) {
    const listed = await gateway.admin('GET', '/admin/channels');
    expect(listed.status).toBe(200);
    return listed.body.data.find((channel: { id: string }) => channel.id === id);
  }

  const costOf = (promptTokens: number, completionTokens: number) => usageCost(prices, promptTokens, completionTokens);

  /** The one bill of the customer and its ledger entry, once the worker settled it. */
  async function onlyBill(customer: Customer, requestId: string) {
    const bills = await books.waitForBills(customer, 1);
    expect(bills.map((bill) => bill.requestId)).toEqual([requestId]);
    const usage = (await books.ledger(customer)).filter((entry) => entry.kind === 'usage');
    expect(usage.map((entry) => entry.reference)).toEqual([requestId]);
    expect(usage[0].amount).toBe(`-${bills[0].cost}`);
    return bills[0];
  }

  /** Nothing billed: no bill, no usage entry, no usage record, no hold left. */
  async function expectNothingBilled(customer: Customer, requestId: string): Promise<void> {
    await sleep(300);
    expect(await books.bills(customer)).toEqual([]);
    expect((await books.ledger(customer)).filter((entry) => entry.kind === 'usage')).toEqual([]);
    expect(await books.usageRecords([requestId])).toEqual([]);
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
  }

  describe('an upstream that hangs before its first byte', () => {
    it("should move a stream to the next route after the channel's stream first-byte timeout, billed once", async () => {
      const model = await modelOver(
        { id: 'hang-stream', baseUrl: `${gateway.mock.url}/hang/v1`, timeouts: { streamFirstByteMs: SHORT_MS } },
        { id: 'hang-stream-backup', baseUrl: healthy() },
      );
      const customer = await gateway.newCustomer();
      const messages = userMessages('A hung first route');
      const startedAt = Date.now();

      const response = await gateway.chat(customer.key, { model, messages, stream: true });

      const elapsed = Date.now() - startedAt;
      expect(response.status).toBe(200);
      expect(elapsed).toBeGreaterThanOrEqual(SHORT_MS - 20);
      expect(elapsed).toBeLessThan(SHORT_MS + 1_500);
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(true);
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(mockPieces().join(''));
      const bill = await onlyBill(customer, requestIdOf(response));
      const usage = mockUsage(messages);
      expect(bill).toMatchObject(usage);
      expect(bill.cost).toBe(formatUsd(costOf(usage.promptTokens, usage.completionTokens)));
    });

    it('should answer 502 after the non-stream first-byte timeout when it is the only route, and bill nothing', async () => {
      const model = await modelOver({
        id: 'hang-only',
        baseUrl: `${gateway.mock.url}/hang/v1`,
        timeouts: { firstByteMs: SHORT_MS },
      });
      const customer = await gateway.newCustomer();
      const startedAt = Date.now();

      const response = await gateway.chat(customer.key, { model, messages: userMessages() });

      expect(response.status).toBe(502);
      expect(Date.now() - startedAt).toBeLessThan(SHORT_MS + 1_500);
      await expectNothingBilled(customer, requestIdOf(response));
      expect(await channelListed('hang-only')).toMatchObject({
        health: { state: 'closed', consecutiveFailures: 1, lastError: 'timed out (UND_ERR_HEADERS_TIMEOUT)' },
      });
    });
  });

  describe('an upstream that breaks off mid-stream', () => {
    const cases: [string, string, Record<string, unknown>][] = [
      ['stalls (silent past its silence timeout)', 'stall', { stall_after: 2 }],
      ['closes the connection early', 'close', { break_after: 2 }],
    ];

    it.each(cases)(
      'should end the stream with an error event when it %s, and bill exactly what was delivered',
      async (_, id, mock) => {
        const model = await modelOver(
          { id: `mid-${id}`, baseUrl: healthy(), timeouts: { silenceMs: SHORT_MS } },
          // Never tried: the client already had its first bytes from the first route.
          { id: `mid-${id}-backup`, baseUrl: healthy() },
        );
        const customer = await gateway.newCustomer();
        const messages = userMessages('A stream that breaks');
        const sentBefore = gateway.mock.requests.length;

        const response = await gateway.chat(customer.key, { model, messages, stream: true, mock });

        expect(response.status).toBe(200);
        expect(gateway.mock.requests.length).toBe(sentBefore + 1);
        const { chunks, done } = parseEventStream(response.text);
        expect(done).toBe(false);
        const delivered = mockPieces().slice(0, 2).join('');
        expect(
          chunks
            .slice(0, -1)
            .map((chunk) => chunk.choices[0].delta.content)
            .join(''),
        ).toBe(delivered);
        expect(chunks.at(-1)).toEqual({
          error: {
            message: expect.any(String),
            type: 'server_error',
            param: null,
            code: 'upstream_stream_broken',
          },
        });
        const bill = await onlyBill(customer, requestIdOf(response));
        expect(bill).toMatchObject({
          promptTokens: estimatePromptTokens(messages),
          completionTokens: countCompletionTokens(delivered),
        });
        expect(bill.cost).toBe(formatUsd(costOf(bill.promptTokens, bill.completionTokens)));
        expect((await channelListed(`mid-${id}`)).health).toMatchObject({
          consecutiveFailures: 1,
          lastError: 'the stream broke off',
        });
      },
    );
  });

  describe('an upstream that answers garbage', () => {
    it('should try the next route, billed once for its answer', async () => {
      const model = await modelOver(
        { id: 'garbage-first', baseUrl: `${gateway.mock.url}/garbage/v1` },
        { id: 'garbage-backup', baseUrl: healthy() },
      );
      const customer = await gateway.newCustomer();
      const messages = userMessages('Garbage first');

      const response = await gateway.chat(customer.key, { model, messages });

      expect(response.status).toBe(200);
      expect(response.body.choices[0].message.content).toBe(mockPieces().join(''));
      const bill = await onlyBill(customer, requestIdOf(response));
      expect(bill).toMatchObject(mockUsage(messages));
    });

    it.each([false, true])(
      'should answer 500 when it is the only route (stream: %s), and bill nothing',
      async (stream) => {
        const model = await modelOver({ id: `garbage-only-${stream}`, baseUrl: `${gateway.mock.url}/garbage/v1` });
        const customer = await gateway.newCustomer();

        const response = await gateway.chat(customer.key, { model, messages: userMessages(), stream });

        expectApiError(response, 500, { type: 'server_error', code: null, param: null });
        await expectNothingBilled(customer, requestIdOf(response));
        expect((await channelListed(`garbage-only-${stream}`)).health.lastError).toBe('abnormal answer');
      },
    );
  });

  describe('channel timeouts and health in the admin API', () => {
    it('should show the effective timeouts: the channel own, the defaults for the rest', async () => {
      const put = await putChannel('timed', { baseUrl: healthy(), timeouts: { connectMs: 1_000, silenceMs: 2_000 } });

      expect(put.status).toBe(200);
      expect(put.body.timeouts).toEqual({
        connectMs: 1_000,
        firstByteMs: 300_000,
        streamFirstByteMs: 30_000,
        silenceMs: 2_000,
      });
      expect(put.body.autoDisableAfterHours).toBeNull();
      expect(put.body.health).toEqual({
        state: 'closed',
        consecutiveFailures: 0,
        openUntil: null,
        lastError: null,
        lastOkAt: null,
      });
      expect((await channelListed('timed')).timeouts).toEqual(put.body.timeouts);
      const replaced = await putChannel('timed', { baseUrl: healthy() });
      expect(replaced.body.timeouts).toEqual({
        connectMs: 5_000,
        firstByteMs: 300_000,
        streamFirstByteMs: 30_000,
        silenceMs: 60_000,
      });
    });

    it.each([
      [{ timeouts: { connectMs: 50 } }],
      [{ timeouts: { silenceMs: 'soon' } }],
      [{ timeouts: { firstByteMs: 3_600_001 } }],
      [{ autoDisableAfterHours: 0 }],
      [{ autoDisableAfterHours: 'never' }],
    ])('should refuse %j with a 400', async (body) => {
      const put = await putChannel('refused', { baseUrl: healthy(), ...body });

      expect(put.status).toBe(400);
      expect(put.body.error).toMatchObject({ type: 'invalid_request_error' });
    });

    it('should show lastOkAt after an answer and the last error without keys or addresses', async () => {
      const model = await modelOver(
        { id: 'health-down', baseUrl: 'http://127.0.0.1:1/v1' },
        { id: 'health-up', baseUrl: healthy() },
      );
      const customer = await gateway.newCustomer();

      const response = await gateway.chat(customer.key, { model, messages: userMessages() });

      expect(response.status).toBe(200);
      const down = await channelListed('health-down');
      expect(down.health).toEqual({
        state: 'closed',
        consecutiveFailures: 1,
        openUntil: null,
        lastError: 'unreachable (ECONNREFUSED)',
        lastOkAt: null,
      });
      const up = await channelListed('health-up');
      expect(Date.now() - Date.parse(up.health.lastOkAt)).toBeLessThan(5_000);
    });
  });

  describe("the operator's channel test", () => {
    const test = (id: string, body?: unknown) => gateway.admin('POST', `/admin/channels/${id}/test`, body);

    it.each([
      ['anthropic', `/v1`],
      ['gemini', `/v1beta`],
      ['openai', `/v1`],
    ])('should answer ok for a working %s channel, even a disabled one, asking the model named', async (type, path) => {
      const put = await putChannel(`tested-${type}`, { type, baseUrl: gateway.mock.url + path, enabled: false });
      expect(put.status).toBe(200);
      const sent = gateway.mock.requests.length;

      const response = await test(`tested-${type}`, { model: 'mock-model' });

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        ok: true,
        status: 200,
        latencyMs: expect.any(Number),
        firstByteMs: expect.any(Number),
      });
      expect(response.body.firstByteMs).toBeLessThanOrEqual(response.body.latencyMs);
      expect(gateway.mock.requests.length).toBe(sent + 1);
      expect(JSON.stringify(gateway.mock.requests.at(-1)!.body)).toContain('ping');
    });

    it.each([
      ['unreachable', 'http://127.0.0.1:1/v1', {}, null, 'unreachable (ECONNREFUSED)'],
      ['hanging', 'hang', { firstByteMs: SHORT_MS }, null, 'timed out (UND_ERR_HEADERS_TIMEOUT)'],
      ['answering garbage', 'garbage', {}, 200, 'abnormal answer: not a completion'],
      ['refusing its key', 'fail/401/invalid_api_key', {}, 401, 'status 401: mock error 401: invalid_api_key'],
    ])('should answer not ok for a channel %s, saying why', async (_, where, timeouts, status, error) => {
      const baseUrl = where.startsWith('http') ? where : `${gateway.mock.url}/${where}/v1`;
      await putChannel('tested-bad', { baseUrl, timeouts });

      const response = await test('tested-bad', { model: 'mock-model' });

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        ok: false,
        status,
        latencyMs: expect.any(Number),
        firstByteMs: status === null ? null : expect.any(Number),
        error,
      });
    });

    it('should ask for the model when no enabled model routes to the channel, and 404 an unknown channel', async () => {
      await putChannel('tested-unrouted', { baseUrl: healthy() });

      expectApiError(await test('tested-unrouted'), 400, {
        type: 'invalid_request_error',
        code: null,
        param: 'model',
      });
      expectApiError(await test('no-such-channel', {}), 404, {
        type: 'invalid_request_error',
        code: 'not_found',
        param: 'channelId',
      });
      expect((await gateway.call('POST', '/admin/channels/tested-unrouted/test')).status).toBe(401);
    });
  });

  describe('deleting', () => {
    it('should refuse a channel an enabled model routes to (409), then delete it once the model is gone', async () => {
      const model = await modelOver({ id: 'doomed', baseUrl: healthy() });

      const refused = await gateway.admin('DELETE', '/admin/channels/doomed');

      expectApiError(refused, 409, { type: 'invalid_request_error', code: 'conflict', param: 'channelId' });
      expect(refused.body.error.message).toContain(model);
      expect(await channelListed('doomed')).toBeDefined();

      const modelDeleted = await gateway.admin('DELETE', `/admin/models/${model}`);
      expect(modelDeleted.status).toBe(204);
      const listedModels = await gateway.admin('GET', '/admin/models');
      expect(listedModels.body.data.map((entry: { id: string }) => entry.id)).not.toContain(model);
      const customer = await gateway.newCustomer();
      await gateway.app.get(CatalogService).reload();
      const gone = await gateway.chat(customer.key, { model, messages: userMessages() });
      expectApiError(gone, 400, { type: 'invalid_request_error', code: null, param: 'model' });

      const deleted = await gateway.admin('DELETE', '/admin/channels/doomed');
      expect(deleted.status).toBe(204);
      expect(await channelListed('doomed')).toBeUndefined();
      expectApiError(await gateway.admin('DELETE', '/admin/channels/doomed'), 404, {
        type: 'invalid_request_error',
        code: 'not_found',
        param: 'channelId',
      });
      expectApiError(await gateway.admin('DELETE', `/admin/models/${model}`), 404, {
        type: 'invalid_request_error',
        code: 'not_found',
        param: 'modelId',
      });
    });

    it("should delete a channel that only a disabled model routes to, taking that model's route with it", async () => {
      await putChannel('kept', { baseUrl: healthy() });
      await putChannel('retired', { baseUrl: healthy() });
      const model = await gateway.addModel({
        enabled: false,
        routes: [
          { channelId: 'kept', upstreamModel: 'mock-gpt' },
          { channelId: 'retired', upstreamModel: 'mock-gpt' },
        ],
      });

      expect((await gateway.admin('DELETE', '/admin/channels/retired')).status).toBe(204);

      const listed = await gateway.admin('GET', '/admin/models');
      const entry = listed.body.data.find((candidate: { id: string }) => candidate.id === model);
      expect(entry.routes.map((route: { channelId: string }) => route.channelId)).toEqual(['kept']);
    });

    it('should ask for the admin token', async () => {
      const response = await gateway.call('DELETE', '/admin/channels/kept');
      expect(response.status).toBe(401);
    });
  });

  describe('auto-disable', () => {
    it('should switch a channel off once its breaker stays open past autoDisableAfterHours', async () => {
      // 0.0002 h = 720 ms; the breaker reopens at the first failed probe after that.
      const put = await putChannel('auto-off', { baseUrl: 'http://127.0.0.1:1/v1', autoDisableAfterHours: 0.0002 });
      expect(put.body.autoDisableAfterHours).toBe(0.0002);
      const model = await gateway.addModel({ routes: [{ channelId: 'auto-off', upstreamModel: 'mock-gpt' }] });
      const customer = await gateway.newCustomer();
      for (let index = 0; index < 5; index++) {
        await gateway.chat(customer.key, { model, messages: userMessages() });
      }
      expect((await channelListed('auto-off')).health.state).toBe('open');

      // The open time is the test's BREAKER_OPEN_MS (1 s): after it, one probe fails and the breaker reopens.
      await sleep(1_100);
      const probed = await gateway.chat(customer.key, { model, messages: userMessages() });

      expect(probed.status).toBe(502);
      const channel = await channelListed('auto-off');
      expect(channel.enabled).toBe(false);
      await gateway.app.get(CatalogService).reload();
      const models = await gateway.call('GET', '/v1/models', { token: customer.key });
      expect(models.body.data.map((entry: { id: string }) => entry.id)).not.toContain(model);
    });
  });

  describe('metrics', () => {
    it('should count upstream requests by outcome and show each breaker state', async () => {
      const model = await modelOver(
        { id: 'metered-down', baseUrl: 'http://127.0.0.1:1/v1' },
        { id: 'metered-up', baseUrl: healthy() },
      );
      const customer = await gateway.newCustomer();
      for (let index = 0; index < 6; index++) {
        expect((await gateway.chat(customer.key, { model, messages: userMessages() })).status).toBe(200);
      }

      const metrics = await gateway.call('GET', '/metrics');

      const sample = (name: string, labels: string) =>
        Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(metrics.text)?.[1]);
      expect(sample('gateway_upstream_requests_total', 'channel="metered-down",outcome="unreachable"')).toBe(5);
      expect(sample('gateway_upstream_requests_total', 'channel="metered-up",outcome="ok"')).toBe(6);
      expect(sample('gateway_channel_breaker_state', 'channel="metered-down"')).toBe(2);
      expect(sample('gateway_channel_breaker_state', 'channel="metered-up"')).toBe(0);
      expect(sample('gateway_upstream_first_byte_seconds_count', 'channel="metered-up"')).toBe(6);
    });
  });
});
