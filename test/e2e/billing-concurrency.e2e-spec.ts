import { formatUsd } from 'src/common/money/money';
import { Prices, usageCost } from 'src/modules/billing/pricing';
import { estimatePromptTokens } from 'src/modules/billing/token-estimator';
import {
  Books,
  costOf,
  creditOf,
  eventually,
  expectApiError,
  mockUsage,
  requestIdOf,
  usd,
  userMessages,
  wireUsageOf,
  BillingWorld,
  openBillingWorld,
} from 'test/e2e/billing-helpers';
import { HttpResult, parseEventStream, TestGateway } from 'test/support/gateway';

const INPUT_PRICE = '1.000003';
const OUTPUT_PRICE = '100.000007';

describe('billing under concurrency', () => {
  let world: BillingWorld;
  let gateway: TestGateway;
  let books: Books;
  let model: string;
  let prices: Prices;

  beforeAll(async () => {
    world = await openBillingWorld(INPUT_PRICE, OUTPUT_PRICE, { maxOutputTokens: 1000, rpm: 100_000 });
    ({ gateway, books, prices, model } = world);
  });
  afterEach(() => books.expectBalanced());
  afterAll(() => world.close());

  const sum = (values: bigint[]) => values.reduce((total, value) => total + value, 0n);

  it('should admit exactly as many concurrent requests as the balance can hold, across two API processes', async () => {
    const messages = userMessages('One of thirty at once');
    const maxTokens = 100;
    const hold = usageCost(prices, estimatePromptTokens(messages), maxTokens);
    const fits = 4;
    // Room for `fits` worst cases and one nano-dollar short of another.
    const initial = hold * BigInt(fits + 1) - 1n;
    const customer = await gateway.newCustomer({ balance: formatUsd(initial) });
    const sentUpstream = gateway.mock.requests.length;

    // A second API process on the same Postgres and Redis: the holds must be shared, not per process.
    const second = await TestGateway.start();
    let responses: HttpResult[];
    try {
      // The upstream answers late, so every request is admitted or refused before any hold is released.
      responses = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          (index % 3 ? gateway : second).chat(customer.key, {
            model,
            messages,
            max_tokens: maxTokens,
            ...(index % 2 ? { stream: true } : {}),
            mock: { latency_ms: 1500 },
          }),
        ),
      );
    } finally {
      await second.close();
    }

    const admitted = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status !== 200);
    expect(admitted).toHaveLength(fits);
    for (const response of refused) {
      expectApiError(response, 403, { code: 'insufficient_balance' });
    }
    expect(gateway.mock.requests.length - sentUpstream).toBe(fits);
    const costs = admitted.map((response) => {
      const usage = response.headers.get('content-type')?.startsWith('text/event-stream')
        ? mockUsage(messages)
        : wireUsageOf(response.body.usage);
      return costOf(prices, usage);
    });
    const expected = initial - sum(costs);
    expect(expected).toBeGreaterThanOrEqual(0n);
    expect(formatUsd(await books.waitForBalance(customer, expected))).toBe(formatUsd(expected));
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
    const bills = await books.bills(customer);
    expect(bills.map((bill) => bill.requestId).sort()).toEqual(admitted.map(requestIdOf).sort());
    expect(bills.map((bill) => bill.cost).sort()).toEqual(costs.map(formatUsd).sort());

    // The holds are gone, so the balance left admits work again.
    const again = await gateway.chat(customer.key, { model, messages, max_tokens: maxTokens });
    expect(again.status).toBe(200);
    const last = costOf(prices, wireUsageOf(again.body.usage));
    expect(await books.waitForBalance(customer, expected - last)).toBe(expected - last);
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
  });

  it('should settle a burst from a referrer and two invitees exactly, with a credit per invitee request', async () => {
    const referrer = await gateway.newCustomer({ balance: '2' });
    const code = (await gateway.call('GET', '/console/referrals', { token: referrer.token })).body.referralCode;
    const invitees = [
      await gateway.newCustomer({ balance: '20', referralCode: code }),
      await gateway.newCustomer({ balance: '20', referralCode: code }),
    ];
    const referrerBefore = await books.balance(referrer);
    const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'];

    // The referrer spends in the same burst, so its own charges and its credits share batches.
    const spenders = [...invitees, referrer];
    const sent = Array.from({ length: 45 }, (_, index) => {
      const customer = spenders[index % 3];
      const reply = words.slice(0, (index % words.length) + 1).join(' ');
      const messages = userMessages(`Burst request number ${index} ${'x '.repeat(index % 5)}`);
      const stream = index % 4 === 0;
      return {
        customer,
        reply,
        messages,
        stream,
        response: gateway.chat(customer.key, { model, messages, stream, mock: { reply } }),
      };
    });
    const results = await Promise.all(sent.map(async (entry) => ({ ...entry, response: await entry.response })));

    expect(results.map(({ response }) => response.status)).toEqual(results.map(() => 200));
    const costs = results.map(({ response, messages, reply, stream }) => {
      if (stream) {
        expect(parseEventStream(response.text).done).toBe(true);
        return costOf(prices, mockUsage(messages, reply));
      }
      return costOf(prices, wireUsageOf(response.body.usage));
    });
    for (const invitee of invitees) {
      const own = costs.filter((_, index) => results[index].customer === invitee);
      const expected = usd('20') - sum(own);
      expect(formatUsd(await books.waitForBalance(invitee, expected))).toBe(formatUsd(expected));
      expect(await books.waitForNoHolds(invitee.accountId)).toBe(0n);
      expect(await books.bills(invitee)).toHaveLength(own.length);
    }
    const invited = results.map(({ customer }) => customer !== referrer);
    const credit = sum(costs.filter((_, index) => invited[index]).map(creditOf));
    const referrerSpent = sum(costs.filter((_, index) => !invited[index]));
    const referrerAfter = referrerBefore + credit - referrerSpent;
    expect(formatUsd(await books.waitForBalance(referrer, referrerAfter))).toBe(formatUsd(referrerAfter));
    expect(await books.waitForNoHolds(referrer.accountId)).toBe(0n);
    const summary = await gateway.call('GET', '/console/referrals', { token: referrer.token });
    expect(summary.body).toMatchObject({ referralCode: code, invitedCount: 2, totalCredited: formatUsd(credit) });
    const ledger = await books.ledger(referrer);
    const references = ledger.filter((entry) => entry.kind === 'referral_credit').map((entry) => entry.reference);
    expect(references.sort()).toEqual(
      results
        .filter((_, index) => invited[index])
        .map(({ response }) => requestIdOf(response))
        .sort(),
    );
    // Newest first, each entry's balanceAfter is the previous one's plus its amount.
    let running = 0n;
    for (const entry of [...ledger].reverse()) {
      running += usd(entry.amount);
      expect({ id: entry.id, balanceAfter: entry.balanceAfter }).toEqual({
        id: entry.id,
        balanceAfter: formatUsd(running),
      });
    }
    expect(running).toBe(referrerAfter);
  });

  it('should never drive a balance below zero when an operator debit races an in-flight request', async () => {
    const customer = await gateway.newCustomer({ balance: '1' });
    const messages = userMessages('Debit me while I think');

    const pending = gateway.chat(customer.key, { model, messages, max_tokens: 100, mock: { latency_ms: 500 } });
    // The debit lands once the request holds its worst case, while the upstream is still thinking.
    expect(
      await eventually(
        () => books.reserved(customer.accountId),
        (reserved) => reserved > 0n,
      ),
    ).toBeGreaterThan(0n);
    const leave = 1n; // nano-dollar
    const debit = await gateway.admin('POST', `/admin/accounts/${customer.accountId}/adjustments`, {
      amount: formatUsd(-(usd('1') - leave)),
      reason: 'operator debit during a request',
    });
    const response = await pending;

    expect(response.status).toBe(200);
    expect(debit.status).toBe(201);
    const cost = costOf(prices, wireUsageOf(response.body.usage));
    expect(cost).toBeGreaterThan(leave);
    // Whatever the charge policy, the balance is what the ledger says and never negative.
    const settled = await books.waitForBills(customer, 1);
    expect(settled).toHaveLength(1);
    const charged = usd(settled[0].cost);
    expect(charged).toBeLessThanOrEqual(cost);
    expect(await books.balance(customer)).toBe(leave - charged);
    expect(leave - charged).toBeGreaterThanOrEqual(0n);
    expect(await books.waitForNoHolds(customer.accountId)).toBe(0n);
  });
});
