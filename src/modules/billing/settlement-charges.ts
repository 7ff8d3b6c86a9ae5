import { ONE_MULTIPLIER_PPM } from 'src/common/money/price-multiplier';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { Prices, referralCredit, splitUsageCost } from 'src/modules/billing/pricing';
import { LedgerPosting } from 'src/modules/ledger/ledger.repository';

export interface Charge {
  /** What the usage costs at the request's prices. */
  cost: bigint;
  /** What the balance covered of it: the cost, unless the balance was short. */
  charged: bigint;
}

export interface Shortfall {
  requestId: string;
  accountId: string;
  /** Nano-dollars of the cost the balance could not cover. */
  missing: bigint;
}

export interface SettlementCharges {
  /** The ledger postings, in the order they apply: each usage, then its referrer's credit. */
  postings: LedgerPosting[];
  /** Per request id. */
  charges: Map<string, Charge>;
  /** Charges the balance could not cover in full (should stay empty). */
  shortfalls: Shortfall[];
}

/**
 * What settling `payloads` (not settled before, of accounts that exist) moves, in their order,
 * against the balances read under lock: each usage charges its account what the balance covers of
 * its cost, so that a balance never goes below zero, and pays the account's referrer its share of
 * what was charged (when the referrer's row was locked too). A credit counts towards what the
 * referrer's own later usages in the batch can be charged.
 */
export function settlementCharges(
  payloads: SettleCompletionPayload[],
  balances: Map<string, bigint>,
  referrerOf: Map<string, string | null>,
  sharePercent: number,
): SettlementCharges {
  const running = new Map(balances);
  const postings: LedgerPosting[] = [];
  const charges = new Map<string, Charge>();
  const shortfalls: Shortfall[] = [];
  const post = (accountId: string, kind: LedgerPosting['kind'], amount: bigint, reference: string) => {
    running.set(accountId, running.get(accountId)! + amount);
    postings.push({ accountId, kind, amount, reference });
  };
  for (const payload of payloads) {
    const { requestId, accountId } = payload;
    const cost = splitUsageCost(pricesOf(payload), payload, multiplierOf(payload));
    // The hold made sure the balance covered this; only an operator's debit in between can make it short.
    const available = running.get(accountId)!;
    const charged = cost <= available ? cost : available;
    charges.set(requestId, { cost, charged });
    if (charged < cost) {
      shortfalls.push({ requestId, accountId, missing: cost - charged });
    }
    if (charged > 0n) {
      post(accountId, 'usage', -charged, requestId);
    }
    const referrer = referrerOf.get(accountId);
    const credit = referrer ? referralCredit(charged, sharePercent) : 0n;
    if (referrer && credit > 0n && running.has(referrer)) {
      post(referrer, 'referral_credit', credit, requestId);
    }
  }
  return { postings, charges, shortfalls };
}

/** The account group's multiplier the usage was held at; absent (1×, or a record from before groups): 1×. */
function multiplierOf(payload: SettleCompletionPayload): bigint {
  return payload.priceMultiplierPpm === undefined ? ONE_MULTIPLIER_PPM : BigInt(payload.priceMultiplierPpm);
}

/** The prices a usage was recorded with (nano-dollars per million tokens, carried as decimal strings). */
function pricesOf(payload: SettleCompletionPayload): Prices {
  const optional = (price: string | undefined) => (price === undefined ? null : BigInt(price));
  return {
    inputPrice: BigInt(payload.inputPrice),
    outputPrice: BigInt(payload.outputPrice),
    cachedInputPrice: optional(payload.cachedInputPrice),
    cacheWriteInputPrice: optional(payload.cacheWriteInputPrice),
  };
}
