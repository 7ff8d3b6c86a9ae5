import { formatUsd } from 'src/common/money/money';
import { usageCost } from 'src/modules/billing/pricing';
import { ImageFamily } from 'src/modules/billing/image-families';
import { estimateRequest, estimateRequestTokens } from 'src/modules/billing/token-estimator';
import { Books, expectApiError, pricesOf, usd } from 'test/e2e/billing-helpers';
import { userMessage } from 'test/e2e/v1-helpers';
import { randomUUID } from 'node:crypto';
import { Customer, TestGateway } from 'test/support/gateway';

const INPUT_PRICE = '2.5';
const OUTPUT_PRICE = '10';
const MAX_OUTPUT = 1000;
const prices = pricesOf(INPUT_PRICE, OUTPUT_PRICE);

/** The hold admission takes for a body, as the gateway computes it (images of an unknown upstream by default). */
function holdFor(body: Record<string, unknown>, outputCap: number, imageFamilies?: ImageFamily[]): bigint {
  return usageCost(prices, estimateRequestTokens(body, { audioReferenceTokens: MAX_OUTPUT, imageFamilies }), outputCap);
}

/** A 1×1 PNG as a data URI: only its header, which is all the estimate reads. */
function tinyPng(): string {
  const header = Buffer.alloc(24);
  header.writeUInt32BE(0x89504e47, 0);
  header.writeUInt32BE(0x0d0a1a0a, 4);
  header.write('IHDR', 12, 'latin1');
  header.writeUInt32BE(1, 16);
  header.writeUInt32BE(1, 20);
  return `data:image/png;base64,${header.toString('base64')}`;
}

/** 40 tiny detail:low images and max_tokens 1: about 3,900 prompt tokens at gpt-4o's prices, 113k at gpt-4o-mini's. */
function lowDetailImages(model: string): Record<string, unknown> {
  const image = { type: 'image_url', image_url: { url: tinyPng(), detail: 'low' } };
  return { model, max_tokens: 1, messages: [{ role: 'user', content: Array.from({ length: 40 }, () => image) }] };
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

  /** A vision model whose one route serves `upstreamModel` on the mock upstream. */
  async function visionModelServing(upstreamModel: string, price = { input: INPUT_PRICE, output: OUTPUT_PRICE }) {
    const channelId = `ch-${randomUUID().slice(0, 8)}`;
    await gateway.addChannel(channelId, { baseUrl: `${gateway.mock.url}/v1` });
    return gateway.addModel({
      inputPrice: price.input,
      outputPrice: price.output,
      maxOutputTokens: MAX_OUTPUT,
      vision: true,
      routes: [{ channelId, upstreamModel }],
    });
  }

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

  it('should hold images at what gpt-4o-mini bills: 20 concurrent requests of 40 low-detail images on $0.01 are refused', async () => {
    // At gpt-4o-mini's own prices, $0.15 and $0.60 per million: 113k tokens are $0.017, 3,900 under $0.001.
    const miniModel = await visionModelServing('gpt-4o-mini', { input: '0.15', output: '0.6' });
    const customer = await gateway.newCustomer({ balance: '0.01' });
    const relayedBefore = gateway.mock.requests.length;

    const responses = await Promise.all(
      Array.from({ length: 20 }, () => gateway.chat(customer.key, lowDetailImages(miniModel))),
    );

    for (const response of responses) {
      expectApiError(response, 403, { code: 'insufficient_balance' });
    }
    await expectUntouched(customer, usd('0.01'), relayedBefore);
  });

  it('should still hold a low-detail image at 85 tokens on a gpt-4o route', async () => {
    const gpt4oModel = await visionModelServing('gpt-4o-2024-08-06');
    const body = lowDetailImages(gpt4oModel);
    const hold = holdFor(body, 1, ['gpt-4o']);
    const short = await gateway.newCustomer({ balance: formatUsd(hold - 1n) });
    const exact = await gateway.newCustomer({ balance: formatUsd(hold) });

    const refused = await gateway.chat(short.key, body);
    const served = await gateway.chat(exact.key, body);

    expectApiError(refused, 403, { code: 'insufficient_balance' });
    expect(served.status).toBe(200);
  });

  it('should hold a prediction at the output price on top of max_tokens', async () => {
    const content = 'const answer = computeTheAnswer(42);\n'.repeat(200);
    const body = { model, messages: userMessage(), max_tokens: 10, prediction: { type: 'content', content } };
    const options = { audioReferenceTokens: MAX_OUTPUT };
    const { promptTokens, predictionTokens } = estimateRequest(body, options);
    // Enough for the prompt (prediction included) and max_tokens, not for the prediction billed as output.
    const balance = usageCost(prices, promptTokens, 10 + predictionTokens) - 1n;
    expect(balance).toBeGreaterThan(usageCost(prices, promptTokens, 10));
    const customer = await gateway.newCustomer({ balance: formatUsd(balance) });
    const relayedBefore = gateway.mock.requests.length;

    const refused = await gateway.chat(customer.key, body);

    expectApiError(refused, 403, { code: 'insufficient_balance' });
    await expectUntouched(customer, balance, relayedBefore);
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
