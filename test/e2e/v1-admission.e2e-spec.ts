import { formatUsd } from 'src/common/money/money';
import { usageCost } from 'src/modules/billing/pricing';
import { estimateRequestTokens } from 'src/modules/billing/token-estimator';
import { Books, expectApiError, pricesOf, usd } from 'test/e2e/billing-helpers';
import { userMessage } from 'test/e2e/v1-helpers';
import { Customer, TestGateway } from 'test/support/gateway';

const INPUT_PRICE = '2.5';
const OUTPUT_PRICE = '10';
const MAX_OUTPUT = 1000;
const prices = pricesOf(INPUT_PRICE, OUTPUT_PRICE);

/** The hold admission takes for a body, as the gateway computes it. */
function holdFor(body: Record<string, unknown>, outputCap: number): bigint {
  return usageCost(prices, estimateRequestTokens(body, { audioReferenceTokens: MAX_OUTPUT }), outputCap);
}

/** Admission holds everything the upstream can bill, and its cost does not freeze the process. */
describe('/v1 admission: holds that cover the whole request', () => {
  let gateway: TestGateway;
  let books: Books;
  let model: string;
  let visionModel: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    books = await Books.open(gateway);
    const options = { inputPrice: INPUT_PRICE, outputPrice: OUTPUT_PRICE, maxOutputTokens: MAX_OUTPUT };
    model = await gateway.addModel(options);
    visionModel = await gateway.addModel({ ...options, vision: true });
  });
  afterAll(async () => {
    await books.close();
    await gateway.close();
  });

  async function expectUntouched(customer: Customer, balance: bigint, relayedBefore: number) {
    expect(gateway.mock.requests.length).toBe(relayedBefore);
    expect(await books.balance(customer)).toBe(balance);
    expect(await books.reserved(customer.accountId)).toBe(0n);
  }

  it('should refuse 20 concurrent requests with ~100k tokens of tools each on a $0.01 balance, relaying nothing', async () => {
    const customer = await gateway.newCustomer({ balance: '0.01' });
    const description = 'Looks up the weather of a city and returns it in degrees. '.repeat(100); // ~1,200 tokens
    const tools = Array.from({ length: 85 }, (_, i) => ({
      type: 'function',
      function: { name: `lookup_${i}`, description, parameters: { type: 'object', properties: {} } },
    }));
    const relayedBefore = gateway.mock.requests.length;

    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        gateway.chat(customer.key, { model, messages: userMessage(), tools, max_tokens: 1 }),
      ),
    );

    for (const response of responses) {
      expectApiError(response, 403, { code: 'insufficient_balance' });
    }
    await expectUntouched(customer, usd('0.01'), relayedBefore);
  });

  it('should hold the larger of max_tokens and max_completion_tokens', async () => {
    const body = { model, messages: userMessage(), max_tokens: 1, max_completion_tokens: MAX_OUTPUT };
    const customer = await gateway.newCustomer({ balance: formatUsd(holdFor(body, MAX_OUTPUT) - 1n) });
    const relayedBefore = gateway.mock.requests.length;

    const refused = await gateway.chat(customer.key, body);
    const tooLarge = await gateway.chat(customer.key, { ...body, max_completion_tokens: MAX_OUTPUT + 1 });

    expectApiError(refused, 403, { code: 'insufficient_balance' });
    expectApiError(tooLarge, 400, { code: null, param: 'max_completion_tokens' });
    await expectUntouched(customer, holdFor(body, MAX_OUTPUT) - 1n, relayedBefore);
  });

  it('should refuse a service_tier the model is not priced for, naming the field', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const relayedBefore = gateway.mock.requests.length;

    const response = await gateway.chat(customer.key, { model, messages: userMessage(), service_tier: 'priority' });
    const standard = await gateway.chat(customer.key, { model, messages: userMessage(), service_tier: 'default' });

    expectApiError(response, 400, { code: null, param: 'service_tier' });
    expect(standard.status).toBe(200);
    expect(gateway.mock.requests.length).toBe(relayedBefore + 1);
  });

  it('should hold an image by its detail, and one of unknown size at the worst case', async () => {
    const image = (detail: string) => ({
      model: visionModel,
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail } },
          ],
        },
      ],
    });
    const balance = holdFor(image('low'), 10);
    const customer = await gateway.newCustomer({ balance: formatUsd(balance) });
    const relayedBefore = gateway.mock.requests.length;

    const unknownSize = await gateway.chat(customer.key, image('high'));
    expectApiError(unknownSize, 403, { code: 'insufficient_balance' });
    await expectUntouched(customer, balance, relayedBefore);

    const low = await gateway.chat(customer.key, image('low'));
    expect(low.status).toBe(200);
  });

  it('should relay special-token text in a prompt as plain text', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const response = await gateway.chat(customer.key, { model, messages: userMessage('Say <|endoftext|> and stop') });

    expect(response.status).toBe(200);
  });

  it('should keep answering health checks while it admits a 1 MB prompt without spaces', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const content = `${'a'.repeat(100_000)} `.repeat(10);
    // The process serves the test's own client too, so a stall shows as a long gap between two answers.
    let longestGap = 0;
    let admitting = true;
    const probe = (async () => {
      let last = performance.now();
      while (admitting) {
        const health = await gateway.call('GET', '/health/live');
        expect(health.status).toBe(200);
        longestGap = Math.max(longestGap, performance.now() - last);
        last = performance.now();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();

    const response = await gateway.chat(customer.key, { model, max_tokens: 10, messages: userMessage(content) });
    admitting = false;
    await probe;

    expect(response.status).toBe(200);
    // The 1 MB body itself takes a moment to parse and relay; the estimate alone took minutes before.
    expect(longestGap).toBeLessThan(1_000);
  });
});
