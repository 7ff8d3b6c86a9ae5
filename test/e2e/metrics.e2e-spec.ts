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
