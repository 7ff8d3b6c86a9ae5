import { AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { formatUsd } from 'src/common/money/money';
import { BillingWorld, costOf, MOCK_DEFAULT_REPLY, mockUsage, openBillingWorld } from 'test/e2e/billing-helpers';
import { Customer } from 'test/support/gateway';

const MODEL = 'gpt-4o-mini';

/**
 * LangChain JS's ChatOpenAI pointed only at the gateway's base URL: with `useResponsesApi` it speaks
 * POST /v1/responses, without it chat completions; both invoke and stream, and are billed the same.
 */
describe('LangChain JS (ChatOpenAI) against the gateway', () => {
  let world: BillingWorld;

  beforeAll(async () => {
    world = await openBillingWorld('0.15', '0.6');
    await world.gateway.addModel({ id: MODEL, inputPrice: '0.15', outputPrice: '0.6', maxOutputTokens: 1000 });
  });
  afterEach(() => world.books.expectBalanced());
  afterAll(() => world.close());

  const prompt = 'Say hello to the world';
  const usage = mockUsage([{ role: 'user', content: prompt }]);

  const chatModelOf = (customer: Customer, useResponsesApi: boolean) =>
    new ChatOpenAI({
      model: MODEL,
      apiKey: customer.key,
      configuration: { baseURL: `${world.gateway.url}/v1` },
      useResponsesApi,
      maxRetries: 0,
    });

  /** The one bill of a fresh customer, once settled; it must cost exactly what the mock's usage costs. */
  async function expectBilledOnce(customer: Customer) {
    const bills = await world.books.waitForBills(customer, 1);
    expect(bills).toEqual([expect.objectContaining({ model: MODEL, cost: formatUsd(costOf(world.prices, usage)) })]);
    await world.books.waitForNoHolds(customer.accountId);
  }

  // The answer's id tells which API the gateway answered: a Response (`resp_…`) or a chat completion.
  for (const [api, useResponsesApi, answerId] of [
    ['the Responses API', true, /^resp_/],
    ['chat completions', false, /^chatcmpl-/],
  ] as const) {
    describe(`through ${api}`, () => {
      it('should invoke, with the usage reported and billed', async () => {
        const customer = await world.gateway.newCustomer({ balance: '10' });
        const before = world.gateway.mock.requests.length;

        const message = await chatModelOf(customer, useResponsesApi).invoke(prompt);

        expect(message.text).toBe(MOCK_DEFAULT_REPLY);
        expect(message.id).toMatch(answerId);
        expect(message.usage_metadata).toMatchObject({
          input_tokens: usage.promptTokens,
          output_tokens: usage.completionTokens,
        });
        expect(world.gateway.mock.requests.slice(before).map((request) => request.path)).toEqual([
          '/v1/chat/completions',
        ]);
        await expectBilledOnce(customer);
      });

      it('should stream, piece by piece', async () => {
        const customer = await world.gateway.newCustomer({ balance: '10' });

        const pieces: AIMessageChunk[] = [];
        for await (const chunk of await chatModelOf(customer, useResponsesApi).stream(prompt)) {
          pieces.push(chunk);
        }

        expect(pieces.map((chunk) => chunk.text).join('')).toBe(MOCK_DEFAULT_REPLY);
        expect(pieces.filter((chunk) => chunk.text !== '').length).toBeGreaterThan(1);
        const whole = pieces.reduce((sum, chunk) => sum.concat(chunk));
        expect(whole.id).toMatch(answerId);
        expect(whole.usage_metadata).toMatchObject({
          input_tokens: usage.promptTokens,
          output_tokens: usage.completionTokens,
        });
        await expectBilledOnce(customer);
      });
    });
  }
});
