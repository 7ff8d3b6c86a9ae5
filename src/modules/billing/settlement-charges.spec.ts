import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { settlementCharges } from 'src/modules/billing/settlement-charges';
import { settlePayload } from 'test/support/settle-payload';

const SHARE = 10;

/** A usage whose cost is exactly `nanos` (one completion token at `nanos` million per million). */
const usage = (accountId: string, nanos: bigint, overrides: Partial<SettleCompletionPayload> = {}) =>
  settlePayload(accountId, { outputPrice: (nanos * 1_000_000n).toString(), ...overrides });

const balances = (entries: Record<string, bigint>) => new Map(Object.entries(entries));
const noReferrers = new Map<string, string | null>();

describe(settlementCharges.name, () => {
  it('should charge the exact cost in bigint arithmetic, where the products pass 2^53', () => {
    const payload = usage('a', 0n, {
      inputPrice: '987654321987',
      outputPrice: '123456789012',
      promptTokens: 1_234_567,
      completionTokens: 7_654_321,
    });
    const balance = 92_233_720_368_547_758n;

    const { postings, charges, shortfalls } = settlementCharges(
      [payload],
      balances({ a: balance }),
      noReferrers,
      SHARE,
    );

    // 1,234,567 × 987,654,321,987 + 7,654,321 × 123,456,789,012 = 2,164,303,326,059,645,481, over 1e6 rounded up.
    const cost = 2_164_303_326_060n;
    expect(charges.get(payload.requestId)).toEqual({ cost, charged: cost });
    expect(postings).toEqual([{ accountId: 'a', kind: 'usage', amount: -cost, reference: payload.requestId }]);
    expect(shortfalls).toEqual([]);
  });

  it('should charge cached and cache-write tokens at the prices recorded with the usage', () => {
    const split = {
      inputPrice: '3000000000',
      outputPrice: '15000000000',
      promptTokens: 10_000,
      completionTokens: 400,
      cachedTokens: 8_000,
      cacheWriteTokens: 1_500,
    };
    const priced = usage('a', 0n, { ...split, cachedInputPrice: '300000000', cacheWriteInputPrice: '3750000000' });
    // Recorded by an earlier version, or for a model without the two prices: the input price.
    const unpriced = usage('a', 0n, split);

    const { charges } = settlementCharges([priced, unpriced], balances({ a: 1_000_000_000n }), noReferrers, SHARE);

    // 500 × $3 + 8,000 × $0.30 + 1,500 × $3.75 + 400 × $15, per million (docs/billing.md's example).
    expect(charges.get(priced.requestId)!.cost).toBe(15_525_000n);
    // 10,000 × $3 + 400 × $15, per million.
    expect(charges.get(unpriced.requestId)!.cost).toBe(36_000_000n);
  });

  it('should round the cost up once, to a whole nano-dollar', () => {
    const payload = usage('a', 0n, { inputPrice: '1', outputPrice: '1', promptTokens: 1, completionTokens: 1 });

    const { charges } = settlementCharges([payload], balances({ a: 10n }), noReferrers, SHARE);

    expect(charges.get(payload.requestId)).toEqual({ cost: 1n, charged: 1n });
  });

  it("should charge at the account group's multiplier the usage was held at, and at 1× without one", () => {
    const prices = { inputPrice: '2500000000', outputPrice: '10000000000', promptTokens: 1_000, completionTokens: 500 };
    const wholesale = usage('a', 0n, { ...prices, priceMultiplierPpm: '800000' });
    const retail = usage('a', 0n, prices);

    const { charges } = settlementCharges([wholesale, retail], balances({ a: 1_000_000_000n }), noReferrers, SHARE);

    // 1,000 × $2.5 + 500 × $10, per million: $0.0075 at 1×, $0.006 at 0.8×.
    expect(charges.get(retail.requestId)!.cost).toBe(7_500_000n);
    expect(charges.get(wholesale.requestId)!.cost).toBe(6_000_000n);
  });

  it('should charge what is left and report the shortfall when the balance cannot cover the cost', () => {
    const payload = usage('a', 250n);

    const { postings, charges, shortfalls } = settlementCharges([payload], balances({ a: 100n }), noReferrers, SHARE);

    expect(charges.get(payload.requestId)).toEqual({ cost: 250n, charged: 100n });
    expect(postings).toEqual([{ accountId: 'a', kind: 'usage', amount: -100n, reference: payload.requestId }]);
    expect(shortfalls).toEqual([{ requestId: payload.requestId, accountId: 'a', missing: 150n }]);
  });

  it('should post nothing for an empty balance, and report the whole cost short', () => {
    const payload = usage('a', 40n);

    const { postings, charges, shortfalls } = settlementCharges([payload], balances({ a: 0n }), noReferrers, SHARE);

    expect(charges.get(payload.requestId)).toEqual({ cost: 40n, charged: 0n });
    expect(postings).toEqual([]);
    expect(shortfalls).toEqual([{ requestId: payload.requestId, accountId: 'a', missing: 40n }]);
  });

  it('should record a zero-cost usage without a posting, a credit or a shortfall', () => {
    const payloads = [usage('a', 0n), usage('a', 5n, { promptTokens: 0, completionTokens: 0 })];

    const { postings, charges, shortfalls } = settlementCharges(
      payloads,
      balances({ a: 0n, referrer: 0n }),
      new Map([['a', 'referrer']]),
      SHARE,
    );

    expect(payloads.map((p) => charges.get(p.requestId))).toEqual([
      { cost: 0n, charged: 0n },
      { cost: 0n, charged: 0n },
    ]);
    expect(postings).toEqual([]);
    expect(shortfalls).toEqual([]);
  });

  it("should drain one account's balance in the order of its requests", () => {
    const payloads = [usage('a', 200n), usage('b', 1n), usage('a', 200n), usage('a', 200n), usage('a', 200n)];

    const { postings, charges, shortfalls } = settlementCharges(
      payloads,
      balances({ a: 500n, b: 1n }),
      noReferrers,
      SHARE,
    );

    expect(payloads.map((p) => charges.get(p.requestId)!.charged)).toEqual([200n, 1n, 200n, 100n, 0n]);
    expect(postings.map(({ accountId, amount }) => [accountId, amount])).toEqual([
      ['a', -200n],
      ['b', -1n],
      ['a', -200n],
      ['a', -100n],
    ]);
    expect(shortfalls).toEqual([
      { requestId: payloads[3].requestId, accountId: 'a', missing: 100n },
      { requestId: payloads[4].requestId, accountId: 'a', missing: 200n },
    ]);
  });

  it('should credit the referrer its share of what was charged, rounded down, right after the usage', () => {
    const payloads = [usage('invitee', 19n), usage('invitee', 9n), usage('invitee', 7_500_000n)];

    const { postings } = settlementCharges(
      payloads,
      balances({ invitee: 10_000_000n, referrer: 0n }),
      new Map([['invitee', 'referrer']]),
      SHARE,
    );

    // 19 → 1 (1.9 rounded down), 9 → nothing (0.9), 7,500,000 → 750,000.
    expect(postings).toEqual([
      { accountId: 'invitee', kind: 'usage', amount: -19n, reference: payloads[0].requestId },
      { accountId: 'referrer', kind: 'referral_credit', amount: 1n, reference: payloads[0].requestId },
      { accountId: 'invitee', kind: 'usage', amount: -9n, reference: payloads[1].requestId },
      { accountId: 'invitee', kind: 'usage', amount: -7_500_000n, reference: payloads[2].requestId },
      { accountId: 'referrer', kind: 'referral_credit', amount: 750_000n, reference: payloads[2].requestId },
    ]);
  });

  it('should credit the share of the charge, not of the cost, when the balance was short', () => {
    const payload = usage('invitee', 1_000n);

    const { postings } = settlementCharges(
      [payload],
      balances({ invitee: 300n, referrer: 0n }),
      new Map([['invitee', 'referrer']]),
      SHARE,
    );

    expect(postings.find((posting) => posting.kind === 'referral_credit')?.amount).toBe(30n);
  });

  it('should credit no referrer whose row was not locked (the account is gone)', () => {
    const payload = usage('invitee', 1_000n);

    const { postings } = settlementCharges(
      [payload],
      balances({ invitee: 5_000n }),
      new Map([['invitee', 'gone']]),
      SHARE,
    );

    expect(postings.map((posting) => posting.kind)).toEqual(['usage']);
  });

  it("should let a credit earned in the batch pay the referrer's own later usage", () => {
    const [invitee, own] = [usage('invitee', 1_000n), usage('referrer', 150n)];

    const { charges, shortfalls } = settlementCharges(
      [invitee, own],
      balances({ invitee: 1_000n, referrer: 0n }),
      new Map<string, string | null>([
        ['invitee', 'referrer'],
        ['referrer', null],
      ]),
      SHARE,
    );

    expect(charges.get(own.requestId)).toEqual({ cost: 150n, charged: 100n });
    expect(shortfalls).toEqual([{ requestId: own.requestId, accountId: 'referrer', missing: 50n }]);
  });

  it('should leave the balances it was given unchanged', () => {
    const given = balances({ a: 500n });

    settlementCharges([usage('a', 200n)], given, noReferrers, SHARE);

    expect(given).toEqual(balances({ a: 500n }));
  });
});
