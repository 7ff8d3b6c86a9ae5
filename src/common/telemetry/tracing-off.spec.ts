import Fastify from 'fastify';
import pino from 'pino';

// Any OpenTelemetry package loaded fails the test: with tracing off, none may be required.
const OTEL_PACKAGES = [
  '@opentelemetry/api',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/resources',
  '@opentelemetry/semantic-conventions',
];
const loaded: string[] = [];
for (const name of OTEL_PACKAGES) {
  jest.mock(name, () => {
    loaded.push(name);
    return {};
  });
}

describe('tracing off', () => {
  beforeEach(() => {
    loaded.length = 0;
    jest.resetModules();
  });

  it('should load no OpenTelemetry package, and trace nothing', async () => {
    const { startTracing, startSpan, traced, tracingOn } = await import('src/common/telemetry/tracing');
    const { requestSpanOf, traceApiRequests } = await import('src/common/telemetry/request-spans');
    const { RequestTrace } = await import('src/common/http/request-trace');
    const { AttemptSpan } = await import('src/modules/relay/upstream/attempt-span');
    const { loadConfig } = await import('src/config/app-config');
    const config = loadConfig({ NODE_ENV: 'test' });
    const fastify = Fastify();
    const hooks = jest.spyOn(fastify, 'addHook');

    await startTracing(config.tracing, 'llm-gateway-api', pino({ level: 'silent' }));
    traceApiRequests(fastify);
    const ran = await traced('settlement batch', { 'gateway.batch_size': 1 }, (span) => Promise.resolve(span));
    const trace = new RequestTrace('req_1', null, pino({ level: 'silent' }));
    fastify.get('/v1/models', (request) => ({ span: requestSpanOf(request) }));
    const answer = await fastify.inject({ method: 'GET', url: '/v1/models' });

    expect(config.tracing).toBeNull();
    expect(tracingOn()).toBe(false);
    expect(hooks).not.toHaveBeenCalled();
    expect(startSpan('request', {})).toBeNull();
    expect(ran).toBeNull();
    expect(answer.json()).toEqual({ span: null });
    expect(AttemptSpan.start(trace, { channel: { id: 'ch', type: 'openai' }, upstreamModel: 'm' } as never)).toBeNull();
    expect(AttemptSpan.upstreamTrace(trace, null)).toEqual({ requestId: 'req_1' });
    expect(loaded).toEqual([]);
    await fastify.close();
  });

  it('should load the packages only when an endpoint is configured', async () => {
    const { startTracing } = await import('src/common/telemetry/tracing');

    // The mocks are empty: the SDK cannot be built from them, which proves they were asked for.
    await expect(
      startTracing({ tracesUrl: 'http://127.0.0.1:1/v1/traces', serviceName: null }, 'x', pino({ level: 'silent' })),
    ).rejects.toThrow();
    expect(loaded).toEqual(expect.arrayContaining(OTEL_PACKAGES));
  });
});
