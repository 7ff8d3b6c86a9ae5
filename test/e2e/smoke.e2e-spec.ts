import { TestGateway } from 'test/support/gateway';

describe('gateway smoke', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await TestGateway.start();
  });
  afterAll(() => gateway.close());

  it('should relay a completion end to end', async () => {
    const model = await gateway.addModel();
    const customer = await gateway.newCustomer({ balance: '10' });
    const response = await gateway.chat(customer.key, { model, messages: [{ role: 'user', content: 'Say hi' }] });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ object: 'chat.completion', model, usage: { prompt_tokens: 8 } });
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });
});
