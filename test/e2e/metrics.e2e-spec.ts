import { TestGateway } from 'test/support/gateway';

describe('GET /metrics', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await TestGateway.start();
  });
  afterAll(() => gateway.close());

  const sample = (text: string, name: string, labels: string) =>
    Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');

  it('should count completions, failed upstream routes and upstream latency per channel', async () => {
    await gateway.addChannel('metrics-down', { baseUrl: 'http://127.0.0.1:1/v1', priority: 10 });
    await gateway.addChannel('metrics-up', { baseUrl: `${gateway.mock.url}/v1` });
    const model = await gateway.addModel({
      routes: [
        { channelId: 'metrics-down', upstreamModel: 'mock-gpt' },
        { channelId: 'metrics-up', upstreamModel: 'mock-gpt' },
      ],
    });
    const customer = await gateway.newCustomer();

    const response = await gateway.chat(customer.key, { model, messages: [{ role: 'user', content: 'Hi' }] });
    expect(response.status).toBe(200);

    const metrics = await gateway.call('GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(sample(metrics.text, 'gateway_upstream_failures_total', 'channel="metrics-down",kind="unreachable"')).toBe(
      1,
    );
    expect(sample(metrics.text, 'gateway_completions_total', `model="${model}",outcome="completed"`)).toBe(1);
    expect(sample(metrics.text, 'gateway_upstream_first_byte_seconds_count', 'channel="metrics-up"')).toBe(1);
    expect(metrics.text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(metrics.text).not.toContain(customer.key);
  });
});

describe('GET /metrics with METRICS_TOKEN set', () => {
  const token = 'metrics-token-for-the-e2e-test';
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await TestGateway.start({ METRICS_TOKEN: token });
  });
  afterAll(() => gateway.close());

  it('should serve the metrics to the bearer of the token', async () => {
    const metrics = await gateway.call('GET', '/metrics', { token });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  });

  const refusals: [string, () => { token?: string; headers?: Record<string, string> }][] = [
    ['no token', () => ({})],
    ['a wrong token', () => ({ token: `${token}-not` })],
    ['the token without its scheme', () => ({ headers: { authorization: token } })],
    ['the admin token', () => ({ token: gateway.adminToken })],
  ];

  it.each(refusals)('should refuse %s with 401 and the error object', async (_case, options) => {
    const metrics = await gateway.call('GET', '/metrics', options());
    expect(metrics.status).toBe(401);
    expect(metrics.body).toEqual({
      error: {
        message: 'Invalid or missing metrics token.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_metrics_token',
      },
    });
    expect(metrics.text).not.toContain('nodejs_heap');
  });
});
