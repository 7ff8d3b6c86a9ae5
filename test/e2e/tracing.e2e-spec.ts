import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { eventually, userMessages } from 'test/e2e/billing-helpers';
import { ApiProcess, killApiProcess, startApiProcess } from 'test/e2e/api-process-helpers';
import { Customer, TestGateway } from 'test/support/gateway';
import { OtlpReceiver, ReceivedSpan, startOtlpReceiver } from 'test/support/otlp-receiver';
import { spawnWorker, stopWorker } from 'test/support/worker-process';

const SPANS_TIMEOUT_MS = 10_000;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** OpenTelemetry spans of one request, sent to a collector of ours by the real API and worker processes. */
describe('tracing', () => {
  let gateway: TestGateway;
  let receiver: OtlpReceiver;
  let api: ApiProcess | null = null;
  let worker: ChildProcess | null = null;
  let customer: Customer;
  let model: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    gateway = await TestGateway.start();
    customer = await gateway.newCustomer();
    model = await gateway.addModel();
    const otlp = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    [api, worker] = await Promise.all([
      startApiProcess({ ...otlp, OTEL_BSP_SCHEDULE_DELAY: '100' }),
      // The worker's spans are awaited only when it stops (the last test).
      spawnWorker({ ...otlp, OTEL_BSP_SCHEDULE_DELAY: '600000' }),
    ]);
  });
  afterAll(async () => {
    await killApiProcess(api);
    await stopWorker(worker);
    await gateway.close();
    await receiver.close();
  });

  function chat(
    body: Record<string, unknown>,
    headers: Record<string, string>,
    key = customer.key,
    signal?: AbortSignal,
  ): Promise<Response> {
    return fetch(`${api!.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, ...body }),
      signal,
    });
  }

  /** The spans of the request `requestId` once its own span (the last to end) arrived. */
  async function spansOfRequest(requestId: string): Promise<{ request: ReceivedSpan; trace: ReceivedSpan[] }> {
    const isRequest = (span: ReceivedSpan) => span.attributes['gateway.request_id'] === requestId;
    await eventually(
      () => Promise.resolve(receiver.spans.some(isRequest)),
      (found) => found,
      SPANS_TIMEOUT_MS,
    );
    const request = receiver.spans.find(isRequest)!;
    return { request, trace: receiver.spans.filter((span) => span.traceId === request.traceId) };
  }

  function upstreamTraceparentOf(requestId: string): string | undefined {
    const received = gateway.mock.requests.find((upstream) => upstream.headers['x-request-id'] === requestId);
    return received?.headers.traceparent as string | undefined;
  }

  it.each([
    ['answer', false],
    ['stream', true],
  ])(
    "should continue the caller's trace through the admission and the upstream attempt, and send the attempt's context upstream (%s)",
    async (_, stream) => {
      const traceId = hex(16);
      const callerSpanId = hex(8);
      const prompt = `tracing-secret-${hex(8)}`;

      const response = await chat(
        { messages: userMessages(prompt), stream },
        { traceparent: `00-${traceId}-${callerSpanId}-01` },
      );
      expect(response.status).toBe(200);
      await response.text();
      const requestId = response.headers.get('x-request-id')!;

      const { request, trace } = await spansOfRequest(requestId);
      expect(request).toEqual(
        expect.objectContaining({
          service: 'llm-gateway-api',
          name: 'POST /v1/chat/completions',
          traceId,
          parentSpanId: callerSpanId,
          statusCode: 0,
        }),
      );
      expect(request.attributes).toEqual(
        expect.objectContaining({
          'http.response.status_code': 200,
          'gen_ai.request.model': model,
          'gateway.account_id': customer.accountId,
        }),
      );
      const admission = trace.find((span) => span.name === 'admission');
      expect(admission?.parentSpanId).toBe(request.spanId);
      const upstream = trace.find((span) => span.name === 'upstream openai');
      expect(upstream).toEqual(
        expect.objectContaining({ parentSpanId: request.spanId, events: ['first_byte'], statusCode: 0 }),
      );
      expect(upstream!.attributes).toEqual(
        expect.objectContaining({
          'gateway.channel_id': expect.any(String),
          'gateway.provider': 'openai',
          'http.response.status_code': 200,
          'gateway.outcome': 'completed',
        }),
      );
      expect(upstreamTraceparentOf(requestId)).toBe(`00-${traceId}-${upstream!.spanId}-01`);
      expect(receiver.bodies.some((body) => body.includes(prompt))).toBe(false);
    },
  );

  it('should start a new trace when the traceparent is malformed', async () => {
    const traceId = hex(16);

    const response = await chat({ messages: userMessages() }, { traceparent: `00-${traceId}-${'0'.repeat(16)}-01` });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;

    const { request, trace } = await spansOfRequest(requestId);
    expect(request.traceId).not.toBe(traceId);
    expect(request.parentSpanId).toBe('');
    const upstream = trace.find((span) => span.name === 'upstream openai')!;
    expect(upstreamTraceparentOf(requestId)).toBe(`00-${request.traceId}-${upstream.spanId}-01`);
  });

  it('should trace a refused request, its admission failed with the refusal', async () => {
    const broke = await gateway.newCustomer({ balance: '0' });

    const response = await chat({ messages: userMessages() }, {}, broke.key);
    expect(response.status).toBe(403);
    const requestId = response.headers.get('x-request-id')!;

    const { request, trace } = await spansOfRequest(requestId);
    expect(request.attributes['http.response.status_code']).toBe(403);
    expect(trace.find((span) => span.name === 'admission')).toEqual(
      expect.objectContaining({ parentSpanId: request.spanId, statusCode: 2 }),
    );
    expect(trace.some((span) => span.name.startsWith('upstream'))).toBe(false);
  });

  it('should end the spans of a stream the client hangs up on', async () => {
    const controller = new AbortController();
    const response = await chat(
      { messages: userMessages(), stream: true, mock: { reply: 'one two three four five six', chunk_delay_ms: 300 } },
      {},
      customer.key,
      controller.signal,
    );
    const requestId = response.headers.get('x-request-id')!;
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();

    const { request } = await spansOfRequest(requestId);
    expect(request.statusCode).toBe(2);
    // The attempt ends after the response closed: the relay sees the hang-up, then bills what was delivered.
    const upstream = await eventually(
      () =>
        Promise.resolve(
          receiver.spans.find((span) => span.parentSpanId === request.spanId && span.name === 'upstream openai'),
        ),
      (found) => found !== undefined,
      SPANS_TIMEOUT_MS,
    );
    expect(upstream!.attributes['gateway.outcome']).toBe('client_aborted');
    expect(upstream!.statusCode).toBe(2);
  });

  it('should send the spans still buffered when the API stops', async () => {
    const patient = await startApiProcess({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    try {
      const response = await fetch(`${patient.url}/v1/models`, {
        headers: { authorization: `Bearer ${customer.key}` },
      });
      expect(response.status).toBe(200);
      const requestId = response.headers.get('x-request-id')!;

      patient.child.kill('SIGTERM');
      expect(await patient.exited).toBe(0);

      expect(receiver.spans.find((span) => span.attributes['gateway.request_id'] === requestId)?.name).toBe(
        'GET /v1/models',
      );
    } finally {
      await killApiProcess(patient);
    }
  });

  it("should trace the worker's settlement batches, and send them when the worker stops", async () => {
    const response = await chat({ messages: userMessages() }, {});
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    await eventually(
      () => gateway.admin('GET', `/admin/accounts/${customer.accountId}/bills?limit=200`),
      (bills) => (bills.body.data as { requestId: string }[]).some((bill) => bill.requestId === requestId),
    );

    // The worker's export waits ten minutes: what arrives was sent on its way out.
    await stopWorker(worker, 'SIGTERM');

    const batches = receiver.spans.filter((span) => span.name === 'settlement batch');
    expect(batches.length).toBeGreaterThan(0);
    expect(batches[0]).toEqual(
      expect.objectContaining({ service: 'llm-gateway-worker', parentSpanId: '', statusCode: 0 }),
    );
    expect(batches[0].attributes).toEqual(
      expect.objectContaining({ 'gateway.batch_size': expect.any(Number), 'gateway.failed': 0 }),
    );
  });
});
