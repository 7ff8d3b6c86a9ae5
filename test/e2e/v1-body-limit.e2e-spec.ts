import { Customer, HttpResult, TestGateway } from 'test/support/gateway';
import { expectApiError, expectInvalidApiKey, userMessage } from 'test/e2e/v1-helpers';

const BODY_LIMIT_BYTES = 2048;

/** A body over the limit: 413, and the body is still the error object (docs/errors.md; any code). */
function expectPayloadTooLarge(response: HttpResult): void {
  const code: unknown = response.body?.error?.code;
  expect(code === null || typeof code === 'string').toBe(true);
  expectApiError(response, 413, { type: 'invalid_request_error', code, param: null });
}

describe('POST /v1/chat/completions with an oversized body', () => {
  let gateway: TestGateway;
  let customer: Customer;
  let model: string;

  beforeAll(async () => {
    gateway = await TestGateway.start({ BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES) });
    model = await gateway.addModel();
    customer = await gateway.newCustomer({ balance: '10' });
  });
  afterAll(() => gateway.close());

  const bigBody = () => JSON.stringify({ model, messages: userMessage('word '.repeat(BODY_LIMIT_BYTES)) });

  it('should answer 413 in the error shape, without calling the upstream', async () => {
    const before = gateway.mock.requests.length;

    const response = await gateway.raw(
      'POST',
      '/v1/chat/completions',
      { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      bigBody(),
    );

    expectPayloadTooLarge(response);
    expect(response.headers.get('x-request-id')).toEqual(expect.stringMatching(/\S/));
    expect(gateway.mock.requests.length).toBe(before);
  });

  it('should answer 413 to an oversized body sent without a content-length (chunked)', async () => {
    const response = await gateway.raw(
      'POST',
      '/v1/chat/completions',
      {
        authorization: `Bearer ${customer.key}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      },
      bigBody(),
    );

    expectPayloadTooLarge(response);
  });

  it('should answer 401, not 413, to an oversized body with a bad key', async () => {
    const response = await gateway.raw(
      'POST',
      '/v1/chat/completions',
      { authorization: 'Bearer sk-not-a-real-key', 'content-type': 'application/json' },
      bigBody(),
    );

    expectInvalidApiKey(response);
  });

  it('should still serve a body under the limit', async () => {
    const body = { model, messages: userMessage('Say hi') };
    expect(JSON.stringify(body).length).toBeLessThan(BODY_LIMIT_BYTES);

    const response = await gateway.chat(customer.key, body);

    expect(response.status).toBe(200);
    expect(response.body.object).toBe('chat.completion');
  });
});
