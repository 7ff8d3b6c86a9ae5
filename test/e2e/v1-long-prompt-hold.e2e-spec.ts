import { metrics } from 'src/common/metrics/metrics';
import { formatUsd } from 'src/common/money/money';
import { usageCost } from 'src/modules/billing/pricing';
import { estimatePromptTokens, estimateRequest, estimateRequestTokens } from 'src/modules/billing/token-estimator';
import { Books, eventually, expectApiError, pricesOf, usd } from 'test/e2e/billing-helpers';
import { rateLimitHeaders } from 'test/e2e/rate-limits-helpers';
import { Customer, parseEventStream, TestGateway, TestWorker } from 'test/support/gateway';

const INPUT_PRICE = '2.5';
const OUTPUT_PRICE = '10';
const MAX_TOKENS = 10;
const MODEL_MAX_OUTPUT = 1000;
const prices = pricesOf(INPUT_PRICE, OUTPUT_PRICE);

// About 37 KB of prose: past the exact budget, so the first hold counts most of it as its bytes.
const PROSE = 'The committee reviewed the quarterly budget, and the engineers shipped their fixes on time. '.repeat(
  400,
);
const messages = [{ role: 'user', content: PROSE }];

/**
 * The prompt as the first, quick hold counts it in a request's body: its text as bytes, no more in all
 * than the length of the JSON text the gateway parsed.
 */
const quickPromptOf = (body: Record<string, unknown>) =>
  estimateRequestTokens(body, {
    audioReferenceTokens: 0,
    restAsBytes: true,
    bodyBytes: Buffer.byteLength(JSON.stringify(body)),
  });
/** The closer bound of the same prompt (the one-pass scan), what billing falls back to without usage. */
const closerPrompt = estimatePromptTokens(messages);
const holdOf = (promptTokens: number) => usageCost(prices, promptTokens, MAX_TOKENS);

/** Requests this process refused for tokens per minute, as its metrics count them. */
async function tokenRefusals(): Promise<number> {
  const { values } = await metrics.rateLimited.get();
  return values.find(({ labels }) => labels.limit === 'tokens')?.value ?? 0;
}

/**
 * A long prompt is held first at a bound that costs nothing to compute (its text as bytes, about four
 * times prose's tokens); only when that is refused is the closer bound counted, and only the closer
 * bound decides a refusal. What a customer sees is the same as if the closer bound were always held.
 */
describe('/v1 admission: a long prompt held at its bytes, refused only at its closer bound', () => {
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    worker = await TestWorker.start();
    books = await Books.open(gateway);
    model = await gateway.addModel({
      inputPrice: INPUT_PRICE,
      outputPrice: OUTPUT_PRICE,
      maxOutputTokens: MODEL_MAX_OUTPUT,
    });
  });
  afterAll(async () => {
    await books?.close();
    await worker?.close();
    await gateway?.close();
  });

  const bodyOf = (extra: Record<string, unknown> = {}, onModel = model) => ({
    model: onModel,
    messages,
    max_tokens: MAX_TOKENS,
    ...extra,
  });
  const ask = (customer: Customer, extra: Record<string, unknown> = {}, onModel = model) =>
    gateway.chat(customer.key, bodyOf(extra, onModel));

  it('should be a long prompt whose quick bound is far above its closer one', () => {
    expect(quickPromptOf(bodyOf())).toBeGreaterThan(3 * closerPrompt);
  });

  it('should hold the quick bound while the balance covers it', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const extra = { mock: { latency_ms: 400 } };
    const pending = ask(customer, extra);
    const reserved = await eventually(
      () => books.reserved(customer.accountId),
      (amount) => amount > 0n,
      2_000,
      10,
    );
    expect(reserved).toBe(holdOf(quickPromptOf(bodyOf(extra))));

    expect((await pending).status).toBe(200);
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
  });

  it('should admit and bill a request whose balance covers the closer bound but not the quick one', async () => {
    const balance = holdOf(closerPrompt) + 1n;
    expect(balance).toBeLessThan(holdOf(quickPromptOf(bodyOf())));
    const customer = await gateway.newCustomer({ balance: formatUsd(balance) });
    const relayedBefore = gateway.mock.requests.length;

    const response = await ask(customer);

    expect(response.status).toBe(200);
    expect(gateway.mock.requests.length).toBe(relayedBefore + 1);
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    const [bill] = await eventually(
      () => books.bills(customer),
      (bills) => bills.length === 1,
      10_000,
    );
    expect(bill.promptTokens).toBe(response.body.usage.prompt_tokens);
  });

  it('should refuse a balance below the closer bound, naming the closer hold', async () => {
    const balance = holdOf(closerPrompt) - 1n;
    const customer = await gateway.newCustomer({ balance: formatUsd(balance) });
    const relayedBefore = gateway.mock.requests.length;

    const refused = await ask(customer);

    expectApiError(refused, 403, { code: 'insufficient_balance' });
    expect(refused.body.error.message).toContain(`may cost up to $${formatUsd(holdOf(closerPrompt))} `);
    expect(gateway.mock.requests.length).toBe(relayedBefore);
    expect(await books.balance(customer)).toBe(balance);
    expect(await books.reserved(customer.accountId)).toBe(0n);
  });

  it('should admit under a tokens-per-minute limit between the two bounds, counting the request once', async () => {
    const tpm = closerPrompt + MAX_TOKENS + 5;
    expect(tpm).toBeLessThan(quickPromptOf(bodyOf()) + MAX_TOKENS);
    const limited = await gateway.addModel({
      inputPrice: INPUT_PRICE,
      outputPrice: OUTPUT_PRICE,
      maxOutputTokens: 1000,
      tpm,
      rpm: 10,
    });
    const customer = await gateway.newCustomer({ balance: '10' });
    const refusalsBefore = await tokenRefusals();

    const response = await ask(customer, { mock: { latency_ms: 100 } }, limited);

    expect(response.status).toBe(200);
    // The quick bound's refusal was not the answer: it is not counted as one.
    expect(await tokenRefusals()).toBe(refusalsBefore);
    expect(rateLimitHeaders(response, 'requests')).toEqual(expect.objectContaining({ limit: '10', remaining: '9' }));
    expect(rateLimitHeaders(response, 'tokens')).toEqual(
      expect.objectContaining({ limit: String(tpm), remaining: String(tpm - closerPrompt - MAX_TOKENS) }),
    );
  });

  it("should cap a delivered answer without usage at the closer bound's output cap, a long prediction included", async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const prediction = { type: 'content', content: PROSE };
    const { predictionTokens } = estimateRequest({ messages, prediction }, { audioReferenceTokens: 0 });
    // Without max_tokens the output cap is the model's maximum, and the upstream may answer at length.
    const closerCap = MODEL_MAX_OUTPUT + predictionTokens;
    // One token a word: an answer longer than the closer cap, far shorter than the quick one.
    const reply = 'word '.repeat(closerCap + 2_000);

    const response = await ask(customer, { max_tokens: undefined, prediction, mock: { omit_usage: true, reply } });

    expect(response.status).toBe(200);
    expect(response.body.usage.completion_tokens).toBe(closerCap);
    const [bill] = await eventually(
      () => books.bills(customer),
      (bills) => bills.length === 1,
      10_000,
    );
    expect(bill.completionTokens).toBe(closerCap);
  });

  it('should bill the closer bound, not the bytes, when the upstream reports no usage', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    const before = await books.balance(customer);

    const response = await ask(customer, { mock: { omit_usage: true, reply: 'Short.' } });

    expect(response.status).toBe(200);
    expect(response.body.usage.prompt_tokens).toBe(closerPrompt);
    const [bill] = await eventually(
      () => books.bills(customer),
      (bills) => bills.length === 1,
      10_000,
    );
    expect(bill.promptTokens).toBe(closerPrompt);
    expect(await books.balance(customer)).toBe(before - usd(bill.cost));
  });

  // A stream drops its parsed prompt once the client has bytes, and hands undici its body once
  // (RelayedPrompt, upstream-client.ts): the upstream still gets all of it, and billing without
  // usage still counts it, from the bytes.
  it('should relay a long streamed prompt whole and bill its closer bound when the upstream reports no usage', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });

    const response = await ask(customer, {
      stream: true,
      stream_options: { include_usage: true },
      mock: { omit_usage: true, reply: 'Short.' },
    });

    expect(response.status).toBe(200);
    const { chunks, done } = parseEventStream(response.text);
    expect(done).toBe(true);
    expect(chunks.at(-1).usage.prompt_tokens).toBe(closerPrompt);
    const relayed = gateway.mock.requests.at(-1)!.body as { messages: { content: string }[] };
    expect(relayed.messages[0].content).toBe(PROSE);
    const [bill] = await eventually(
      () => books.bills(customer),
      (bills) => bills.length === 1,
      10_000,
    );
    expect(bill.promptTokens).toBe(closerPrompt);
  });
});
