import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import pino from 'pino';
import { formatUsd } from 'src/common/money/money';
import { usageCost } from 'src/modules/billing/pricing';
import { estimateRequest } from 'src/modules/billing/token-estimator';
import { Books, costOf, expectApiError, mockUsage, pricesOf, requestIdOf } from 'test/e2e/billing-helpers';
import { userMessage } from 'test/e2e/v1-helpers';
import { TestGateway, TestWorker } from 'test/support/gateway';

const prices = pricesOf('2.5', '10');
const WARNING = 'upstream usage exceeds the hold';

/** What the books do when the upstream bills output beyond max_tokens (rejected prediction tokens). */
describe('billing of output the upstream bills beyond max_tokens', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;
  const lines: Record<string, any>[] = [];

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    gateway = await TestGateway.start({}, logger);
    worker = await TestWorker.start();
    books = await Books.open(gateway);
    model = await gateway.addModel({ inputPrice: '2.5', outputPrice: '10', maxOutputTokens: 1000 });
  });
  afterAll(async () => {
    await books.close();
    await worker.close();
    await gateway.close();
  });

  const warningsFor = (reqId: string) => lines.filter((line) => line.msg === WARNING && line.reqId === reqId);

  it('should hold rejected prediction tokens: of two concurrent requests on the balance of one hold, one is served and charged in full', async () => {
    const content = 'const answer = computeTheAnswer(42);\n'.repeat(100);
    const messages = userMessage();
    const body = { model, messages, max_tokens: 10, prediction: { type: 'content', content } };
    const { promptTokens, predictionTokens } = estimateRequest(body, { audioReferenceTokens: 1000 });
    const hold = usageCost(prices, promptTokens, 10 + predictionTokens);
    const customer = await gateway.newCustomer({ balance: formatUsd(hold) });
    // The upstream rejects the whole prediction and bills its tokens as output.
    const mock = { rejected_prediction_tokens: countTokens(content) };

    const responses = await Promise.all([1, 2].map(() => gateway.chat(customer.key, { ...body, mock })));

    const served = responses.filter((response) => response.status === 200);
    expect(served).toHaveLength(1);
    expectApiError(
      responses.find((response) => response.status !== 200)!,
      403,
      { code: 'insufficient_balance' },
    );
    const { usage } = served[0].body;
    expect(usage.completion_tokens).toBe(mockUsage(messages).completionTokens + countTokens(content));
    const cost = costOf(prices, { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });
    expect(await books.waitForBalance(customer, hold - cost)).toBe(hold - cost);
    expect(warningsFor(requestIdOf(served[0]))).toEqual([]);
  });

  it('should log usage above the hold with its counts, and charge no more than the balance', async () => {
    const customer = await gateway.newCustomer({ balance: '0.01' });
    const body = { model, messages: userMessage(), max_tokens: 5, mock: { rejected_prediction_tokens: 50_000 } };

    const response = await gateway.chat(customer.key, body);

    expect(response.status).toBe(200);
    const reqId = requestIdOf(response);
    expect(await books.waitForBalance(customer, 0n)).toBe(0n);
    expect(warningsFor(reqId)).toEqual([
      expect.objectContaining({
        level: 40,
        modelId: model,
        completionTokens: response.body.usage.completion_tokens,
        heldCompletionTokens: 5,
      }),
    ]);
    expect(JSON.stringify(warningsFor(reqId))).not.toContain('Say hi');
  });
});
