import { formatUsd } from 'src/common/money/money';
import { Prices, usageCost } from 'src/modules/billing/pricing';
import { countCompletionTokens, estimatePromptTokens } from 'src/modules/billing/token-estimator';
import {
  Books,
  completeEvents,
  costOf,
  creditOf,
  mockPieces,
  mockUsage,
  pricesOf,
  requestIdOf,
  sleep,
  streamedContent,
  streamUntil,
  Usage,
  userMessages,
  wireUsageOf,
  BillingWorld,
  openBillingWorld,
} from 'test/e2e/billing-helpers';
import { Customer, parseEventStream, TestGateway } from 'test/support/gateway';

// Prices whose products are not whole nano-dollars, so every cost below goes through the round-up.
const INPUT_PRICE = '1.234567';
const OUTPUT_PRICE = '3.000001';
const LONG_REPLY = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');

describe('billing: what each completion costs', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  let model: string;
  let prices: Prices;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE, { maxOutputTokens: 1000 });
    ({ gateway, books, prices, model } = world);
  });
  afterEach(() => books.expectBalanced());
  afterAll(() => world.close());

  /** Waits until the balance is `before` minus `costs`, then checks it exactly and that no hold is left. */
  async function expectCharged(customer: Customer, before: bigint, costs: bigint[]): Promise<void> {
    const expected = costs.reduce((balance, cost) => balance - cost, before);
    expect(formatUsd(await books.waitForBalance(customer, expected))).toBe(formatUsd(expected));
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
  }

  const costFor = (usage: Usage) => costOf(prices, usage);

  describe('a non-streaming completion', () => {
    it('should charge exactly the usage the client saw and show one bill and one usage ledger entry', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Say hi to the whole world' },
      ];

      const response = await gateway.chat(customer.key, { model, messages });

      expect(response.status).toBe(200);
      const requestId = requestIdOf(response);
      const usage = wireUsageOf(response.body.usage);
      expect(usage).toEqual(mockUsage(messages));
      const cost = costFor(usage);
      expect(cost).toBeGreaterThan(0n);
      await expectCharged(customer, before, [cost]);

      const bills = await books.bills(customer);
      expect(bills).toEqual([
        {
          requestId,
          createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
          model,
          keyId: customer.keyId,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          // The mock's OpenAI answer reports no cache and no reasoning unless the prompt asks.
          cachedTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 0,
          cost: formatUsd(cost),
          // The request sent no X-Request-Id of its own.
          clientRequestId: null,
        },
      ]);
      const usageEntries = (await books.ledger(customer)).filter((entry) => entry.kind === 'usage');
      expect(usageEntries).toEqual([
        expect.objectContaining({
          kind: 'usage',
          amount: formatUsd(-cost),
          balanceAfter: formatUsd(before - cost),
          reference: requestId,
        }),
      ]);
      const [record] = await books.usageRecords([requestId]);
      expect(record).toEqual(
        expect.objectContaining({ status: 'completed', usage_source: 'upstream', charged: cost.toString() }),
      );
    });

    it('should ignore a client-sent x-request-id, so two requests can never share one bill', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Two requests, one header');
      const headers = { 'x-request-id': 'req_chosen_by_the_client' };

      const first = await gateway.chat(customer.key, { model, messages }, headers);
      const second = await gateway.chat(customer.key, { model, messages }, headers);

      expect([first.status, second.status]).toEqual([200, 200]);
      const ids = [requestIdOf(first), requestIdOf(second)];
      expect(ids[0]).not.toBe(ids[1]);
      expect(ids).not.toContain('req_chosen_by_the_client');
      const cost = costFor(wireUsageOf(first.body.usage));
      await expectCharged(customer, before, [cost, cost]);
      expect((await books.bills(customer)).map((bill) => bill.requestId).sort()).toEqual([...ids].sort());
    });
  });

  describe('a streaming completion', () => {
    it.each([
      ['without stream_options', {}],
      ['with stream_options.include_usage false', { stream_options: { include_usage: false } }],
    ])(
      'should show no usage %s, yet bill exactly the upstream usage',
      async (_label, extra: Record<string, unknown>) => {
        const customer = await gateway.newCustomer({ balance: '10' });
        const before = await books.balance(customer);
        const messages = userMessages('Stream me a greeting please');
        const sentUpstream = gateway.mock.requests.length;

        const response = await gateway.chat(customer.key, { model, messages, stream: true, ...extra });

        expect(response.status).toBe(200);
        const { chunks, done } = parseEventStream(response.text);
        expect(done).toBe(true);
        expect(response.text).not.toContain('"usage"');
        expect(chunks.every((chunk) => !('usage' in chunk) && chunk.choices.length > 0)).toBe(true);
        expect(streamedContent(chunks)).toBe(mockPieces().join(''));
        // The gateway asked the upstream for usage even though the client did not.
        const upstreamBody = gateway.mock.requests.slice(sentUpstream)[0].body as Record<string, any>;
        expect(upstreamBody.stream_options).toEqual({ include_usage: true });

        const usage = mockUsage(messages);
        await expectCharged(customer, before, [costFor(usage)]);
        const [bill] = await books.bills(customer);
        expect(bill).toEqual(
          expect.objectContaining({
            requestId: requestIdOf(response),
            promptTokens: usage.promptTokens,
            completionTokens: usage.completionTokens,
            cost: formatUsd(costFor(usage)),
          }),
        );
      },
    );

    it('should send the usage chunk when include_usage is true and bill exactly that usage', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Count my tokens for me');

      const response = await gateway.chat(customer.key, {
        model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
      });

      expect(response.status).toBe(200);
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(true);
      const usageChunks = chunks.filter((chunk) => chunk.usage);
      expect(usageChunks).toHaveLength(1);
      expect(usageChunks[0]).toBe(chunks.at(-1));
      expect(usageChunks[0].choices).toEqual([]);
      const usage = wireUsageOf(usageChunks[0].usage);
      expect(usage).toEqual(mockUsage(messages));
      await expectCharged(customer, before, [costFor(usage)]);
      expect((await books.bills(customer)).map((bill) => bill.cost)).toEqual([formatUsd(costFor(usage))]);
    });
  });

  describe('an upstream that reports no usage', () => {
    it('should bill a non-streaming answer by the tokenizer and answer with usage equal to what was billed', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Answer without usage, please');
      const reply = 'An answer whose usage the upstream forgot to report.';

      const response = await gateway.chat(customer.key, { model, messages, mock: { omit_usage: true, reply } });

      expect(response.status).toBe(200);
      const estimated: Usage = {
        promptTokens: estimatePromptTokens(messages),
        completionTokens: countCompletionTokens(reply),
      };
      expect(response.body.usage).toEqual({
        prompt_tokens: estimated.promptTokens,
        completion_tokens: estimated.completionTokens,
        total_tokens: estimated.promptTokens + estimated.completionTokens,
      });
      await expectCharged(customer, before, [costFor(estimated)]);
      const [bill] = await books.bills(customer);
      expect(bill).toEqual(
        expect.objectContaining({
          requestId: requestIdOf(response),
          promptTokens: estimated.promptTokens,
          completionTokens: estimated.completionTokens,
          cost: formatUsd(costFor(estimated)),
        }),
      );
      expect((await books.usageRecords([bill.requestId]))[0].usage_source).toBe('estimated');
    });

    it('should bill a stream by the tokenizer and, when asked, send a usage chunk equal to what was billed', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Stream without usage');
      const reply = 'Streamed words without any usage report.';

      const asked = await gateway.chat(customer.key, {
        model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
        mock: { omit_usage: true, reply },
      });
      const unasked = await gateway.chat(customer.key, {
        model,
        messages,
        stream: true,
        mock: { omit_usage: true, reply },
      });

      const estimated: Usage = {
        promptTokens: estimatePromptTokens(messages),
        completionTokens: countCompletionTokens(reply),
      };
      const askedStream = parseEventStream(asked.text);
      expect(askedStream.done).toBe(true);
      expect(streamedContent(askedStream.chunks)).toBe(reply);
      expect(askedStream.chunks.filter((chunk) => chunk.usage).map((chunk) => wireUsageOf(chunk.usage))).toEqual([
        estimated,
      ]);
      expect(parseEventStream(unasked.text).done).toBe(true);
      expect(unasked.text).not.toContain('"usage"');
      const cost = costFor(estimated);
      await expectCharged(customer, before, [cost, cost]);
      expect((await books.bills(customer)).map((bill) => [bill.promptTokens, bill.completionTokens])).toEqual([
        [estimated.promptTokens, estimated.completionTokens],
        [estimated.promptTokens, estimated.completionTokens],
      ]);
    });

    it('should never bill more completion tokens than max_tokens allows, nor more than the hold', async () => {
      const messages = userMessages('Five long words please');
      const maxTokens = 5;
      // Five word pieces for the mock (it stops at max_tokens of them), many more for a real tokenizer.
      const reply = Array.from({ length: maxTokens }, () => 'Supercalifragilisticexpialidocious').join(' ');
      expect(countCompletionTokens(reply)).toBeGreaterThan(maxTokens);
      const hold = usageCost(prices, estimatePromptTokens(messages), maxTokens);
      const customer = await gateway.newCustomer({ balance: formatUsd(hold) });

      const response = await gateway.chat(customer.key, {
        model,
        messages,
        max_tokens: maxTokens,
        mock: { omit_usage: true, reply },
      });

      expect(response.status).toBe(200);
      const [bill] = await books.waitForBills(customer, 1);
      expect(bill).toBeDefined();
      // The upstream cannot generate more than max_tokens per choice, so neither may the estimate.
      expect(bill.completionTokens).toBeLessThanOrEqual(maxTokens);
      expect(response.body.usage.completion_tokens).toBe(bill.completionTokens);
      const cost = costFor(bill);
      expect(cost).toBeLessThanOrEqual(hold);
      expect(bill.cost).toBe(formatUsd(cost));
      await expectCharged(customer, hold, [cost]);
    });
  });

  describe('n: 3', () => {
    it('should bill the completion tokens of all three choices (non-streaming)', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Three candidates please');

      const response = await gateway.chat(customer.key, { model, messages, n: 3 });

      expect(response.status).toBe(200);
      expect(response.body.choices).toHaveLength(3);
      const usage = wireUsageOf(response.body.usage);
      expect(usage).toEqual(mockUsage(messages, undefined, 3));
      await expectCharged(customer, before, [costFor(usage)]);
      expect((await books.bills(customer))[0].completionTokens).toBe(mockPieces().length * 3);
    });

    it('should bill the completion tokens of all three choices (streaming, usage hidden)', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Three streamed candidates');

      const response = await gateway.chat(customer.key, { model, messages, n: 3, stream: true });

      expect(response.status).toBe(200);
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(true);
      expect(new Set(chunks.flatMap((chunk) => chunk.choices.map((choice: any) => choice.index)))).toEqual(
        new Set([0, 1, 2]),
      );
      await expectCharged(customer, before, [costFor(mockUsage(messages, undefined, 3))]);
    });

    it('should count every choice by the tokenizer when the upstream omits usage', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Three candidates, no usage');
      const reply = 'Candidate text without usage.';

      const response = await gateway.chat(customer.key, { model, messages, n: 3, mock: { omit_usage: true, reply } });

      expect(response.status).toBe(200);
      const estimated: Usage = {
        promptTokens: estimatePromptTokens(messages),
        completionTokens: countCompletionTokens(reply.repeat(3)),
      };
      expect(wireUsageOf(response.body.usage)).toEqual(estimated);
      expect(estimated.completionTokens).toBeGreaterThanOrEqual(3 * countCompletionTokens(reply) - 2);
      await expectCharged(customer, before, [costFor(estimated)]);
    });
  });

  describe('a stream cut short', () => {
    it('should bill an aborted stream for what was delivered, once, with status client_aborted', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Tell me a long story');
      const pieces = mockPieces(LONG_REPLY);

      const result = await streamUntil(
        gateway,
        customer.key,
        { model, messages, stream: true, mock: { chunk_delay_ms: 200, reply: LONG_REPLY } },
        (text) => streamedContent(completeEvents(text)) !== '',
      );

      expect(result.status).toBe(200);
      expect(result.aborted).toBe(true);
      const seen = streamedContent(completeEvents(result.text));
      expect(seen).toBe(pieces[0]);
      const [bill] = await books.waitForBills(customer, 1);
      expect(bill.requestId).toBe(result.requestId);
      // The gateway may have written a piece or two more before it saw the hang-up: never fewer than seen.
      const possible = [1, 2, 3].map((count) => countCompletionTokens(pieces.slice(0, count).join('')));
      expect(possible).toContain(bill.completionTokens);
      expect(bill.promptTokens).toBe(estimatePromptTokens(messages));
      const cost = costFor(bill);
      expect(bill.cost).toBe(formatUsd(cost));
      expect(cost).toBeGreaterThan(0n);
      expect(cost).toBeLessThan(costFor(mockUsage(messages, LONG_REPLY)));
      await expectCharged(customer, before, [cost]);

      await sleep(300);
      expect(await books.bills(customer)).toHaveLength(1);
      const records = await books.usageRecordsOf(customer.accountId);
      expect(records.map((record) => [record.request_id, record.status])).toEqual([
        [result.requestId, 'client_aborted'],
      ]);
    });

    it('should bill a stream the upstream broke off for the delivered part, with status upstream_broken', async () => {
      const customer = await gateway.newCustomer({ balance: '10' });
      const before = await books.balance(customer);
      const messages = userMessages('Break after two pieces');

      const response = await gateway.chat(customer.key, {
        model,
        messages,
        stream: true,
        mock: { break_after: 2, reply: LONG_REPLY },
      });

      expect(response.status).toBe(200);
      const { chunks, done } = parseEventStream(response.text);
      expect(done).toBe(false);
      expect(chunks.at(-1)).toEqual({ error: expect.objectContaining({ type: 'server_error' }) });
      const delivered = streamedContent(chunks.slice(0, -1));
      expect(delivered).toBe(mockPieces(LONG_REPLY).slice(0, 2).join(''));
      const billed: Usage = {
        promptTokens: estimatePromptTokens(messages),
        completionTokens: countCompletionTokens(delivered),
      };
      const cost = costFor(billed);
      await expectCharged(customer, before, [cost]);
      const bills = await books.bills(customer);
      expect(bills).toEqual([
        expect.objectContaining({
          requestId: requestIdOf(response),
          promptTokens: billed.promptTokens,
          completionTokens: billed.completionTokens,
          cost: formatUsd(cost),
        }),
      ]);
      const [record] = await books.usageRecords([bills[0].requestId]);
      expect(record.status).toBe('upstream_broken');
    });
  });

  describe('referral credit', () => {
    it('should credit the referrer floor(cost x 10 / 100) per request, with entries referencing the requests', async () => {
      const referrer = await gateway.newCustomer({ balance: '1' });
      const code = (await gateway.call('GET', '/console/referrals', { token: referrer.token })).body.referralCode;
      const invitee = await gateway.newCustomer({ balance: '10', referralCode: code });
      const otherInvitee = await gateway.newCustomer({ balance: '10', referralCode: code });
      const referrerBefore = await books.balance(referrer);
      const inviteeBefore = await books.balance(invitee);
      const replies = ['one', 'one two', 'one two three', 'a b c d e f g'];

      const responses = [];
      for (const reply of replies) {
        responses.push(await gateway.chat(invitee.key, { model, messages: userMessages('Refer me'), mock: { reply } }));
      }

      expect(responses.map((response) => response.status)).toEqual(replies.map(() => 200));
      const costs = responses.map((response) => costFor(wireUsageOf(response.body.usage)));
      const credits = costs.map(creditOf);
      const totalCredit = credits.reduce((sum, credit) => sum + credit, 0n);
      // Rounding per request, not once over the sum: the two differ for these costs.
      const roundedOnce = creditOf(costs.reduce((sum, cost) => sum + cost, 0n));
      expect(totalCredit).toBeLessThan(roundedOnce);
      await expectCharged(invitee, inviteeBefore, costs);
      expect(formatUsd(await books.waitForBalance(referrer, referrerBefore + totalCredit))).toBe(
        formatUsd(referrerBefore + totalCredit),
      );
      expect(await books.waitForNoHolds(referrer.accountId)).toBe(0n);

      const summary = await gateway.call('GET', '/console/referrals', { token: referrer.token });
      expect(summary.body).toMatchObject({
        referralCode: code,
        invitedCount: 2,
        totalCredited: formatUsd(totalCredit),
      });
      const requestIds = responses.map(requestIdOf);
      const creditEntries = (await books.ledger(referrer)).filter((entry) => entry.kind === 'referral_credit');
      expect(creditEntries.map((entry) => [entry.reference, entry.amount]).sort()).toEqual(
        requestIds.map((id, index) => [id, formatUsd(credits[index])]).sort(),
      );
      expect(await books.bills(referrer)).toEqual([]);
      expect(await books.balance(otherInvitee)).toBe(10_000_000_000n);
    });

    it('should write no credit entry when a cost is too small to give a whole nano-dollar', async () => {
      const cheap = await gateway.addModel({ inputPrice: '0.000001', outputPrice: '0.000001' });
      const referrer = await gateway.newCustomer({ balance: '1' });
      const code = (await gateway.call('GET', '/console/referrals', { token: referrer.token })).body.referralCode;
      const invitee = await gateway.newCustomer({ balance: '1', referralCode: code });
      const before = await books.balance(invitee);
      const messages = userMessages('tiny');

      const response = await gateway.chat(invitee.key, { model: cheap, messages });

      expect(response.status).toBe(200);
      const cost = costOf(pricesOf('0.000001', '0.000001'), wireUsageOf(response.body.usage));
      expect(cost).toBeGreaterThan(0n);
      expect(creditOf(cost)).toBe(0n);
      await expectCharged(invitee, before, [cost]);
      expect(await books.balance(referrer)).toBe(1_000_000_000n);
      expect(await books.ledgerByReference([requestIdOf(response)])).toEqual([
        { account_id: invitee.accountId, kind: 'usage', amount: (-cost).toString() },
      ]);
      const summary = await gateway.call('GET', '/console/referrals', { token: referrer.token });
      expect(summary.body).toEqual(expect.objectContaining({ invitedCount: 1, totalCredited: '0' }));
    });

    it('should let the referrer spend a fresh credit at once (the admission balance is refreshed)', async () => {
      const expensive = await gateway.addModel({ inputPrice: '1', outputPrice: '1000' });
      const referrer = await gateway.newCustomer({ balance: '0' });
      const code = (await gateway.call('GET', '/console/referrals', { token: referrer.token })).body.referralCode;
      const invitee = await gateway.newCustomer({ balance: '5', referralCode: code });
      const small = { model, messages: userMessages('Spend my credit'), max_tokens: 10 };
      // The refusal loads the referrer's (empty) balance into the admission cache.
      const refused = await gateway.chat(referrer.key, small);
      expect(refused.status).toBe(403);

      const invited = await gateway.chat(invitee.key, { model: expensive, messages: userMessages('Pay my referrer') });
      expect(invited.status).toBe(200);
      const credit = creditOf(costOf(pricesOf('1', '1000'), wireUsageOf(invited.body.usage)));
      expect(credit).toBeGreaterThan(usageCost(prices, estimatePromptTokens(small.messages), 10));
      expect(await books.waitForBalance(referrer, credit)).toBe(credit);

      const spent = await gateway.chat(referrer.key, small);

      expect(spent.status).toBe(200);
      const cost = costFor(wireUsageOf(spent.body.usage));
      await expectCharged(referrer, credit, [cost]);
    });
  });
});
