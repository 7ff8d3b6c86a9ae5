import { formatUsd } from 'src/common/money/money';
import { costOf, creditOf, pricesOf, userMessages, wireUsageOf } from 'test/e2e/billing-helpers';
import { ISO_DATE_TIME } from 'test/e2e/e2e-helpers';
import { waitForStatus } from 'test/e2e/payments-db-helpers';
import {
  committedAnswer,
  createTopup,
  orderNoOf,
  TOPUP_CNY,
  TOPUP_CREDIT,
  usePaymentsWorld,
} from 'test/e2e/payments-helpers';
import { Customer } from 'test/support/gateway';

// Prices whose products are not whole nano-dollars, so each credit's floor matters.
const INPUT_PRICE = '1.234567';
const OUTPUT_PRICE = '3.000001';
const REPLIES = ['one', 'one two', 'one two three', 'a b c d e f g'];

/**
 * Referrals on a gateway without mail (no SMTP_URL): nobody can verify an address, so an invitee's
 * first paid top-up is what makes its referral count.
 */
describe('referrals: a paid top-up makes a referral take effect', () => {
  const world = usePaymentsWorld();
  let model: string;
  beforeAll(async () => {
    model = await world.gateway.addModel({ inputPrice: INPUT_PRICE, outputPrice: OUTPUT_PRICE });
  });

  /** Registers `email` through the console (with `referralCode`), and gives it an API key. */
  const register = async (email: string, referralCode?: string): Promise<Customer> => {
    const registered = await world.gateway.call('POST', '/console/auth/register', {
      body: { email, password: 'password-123', referralCode },
    });
    expect(registered.status).toBe(201);
    const token: string = registered.body.accessToken;
    const key = await world.gateway.call('POST', '/console/keys', { token, body: { name: 'test' } });
    expect(key.status).toBe(201);
    return { accountId: registered.body.account.id, email, token, key: key.body.key, keyId: key.body.id };
  };
  const referralsOf = async (customer: Customer) =>
    (await world.gateway.call('GET', '/console/referrals', { token: customer.token })).body;
  /** Tops the customer up through the fake Alipay, the payer paying and the wallet notifying. */
  const topUp = async (customer: Customer) => {
    const order = await createTopup(world, customer, 'alipay', TOPUP_CNY);
    expect(await world.alipay.pay(orderNoOf(order.id))).toEqual([committedAnswer('alipay')]);
    await waitForStatus(world, order.id, 'paid');
  };
  /** One settled request per reply; the cost of each, as the mock upstream's usage prices it. */
  const spend = async (customer: Customer, replies: string[]): Promise<bigint[]> => {
    const costs: bigint[] = [];
    for (const reply of replies) {
      const before = await world.books.balance(customer);
      const response = await world.gateway.chat(customer.key, { model, messages: userMessages(), mock: { reply } });
      expect(response.status).toBe(200);
      const cost = costOf(pricesOf(INPUT_PRICE, OUTPUT_PRICE), wireUsageOf(response.body.usage));
      expect(await world.books.waitForBalance(customer, before - cost)).toBe(before - cost);
      costs.push(cost);
    }
    return costs;
  };

  it('should pay the referrer floor(cost x 10 / 100) per request once the unverified invitee paid a top-up, and nothing before', async () => {
    const referrer = await world.gateway.newCustomer({ balance: '0', verified: false });
    const { referralCode } = await referralsOf(referrer);
    // An operator's credit is no top-up: the invitee spends it before its referral takes effect.
    const invitee = await world.gateway.newCustomer({ balance: '1', referralCode, verified: false });
    await spend(invitee, ['before']);
    expect(await world.books.balance(referrer)).toBe(0n);
    expect(await referralsOf(referrer)).toMatchObject({ invitedCount: 0, totalCredited: '0', invitees: [] });

    await topUp(invitee);
    expect(await referralsOf(referrer)).toMatchObject({ invitedCount: 1, totalCredited: '0' });
    const costs = await spend(invitee, REPLIES);

    const credits = costs.map(creditOf);
    const total = credits.reduce((sum, credit) => sum + credit, 0n);
    expect(await world.books.waitForBalance(referrer, total)).toBe(total);
    const entries = (await world.books.ledger(referrer)).filter((entry) => entry.kind === 'referral_credit');
    expect(entries.map((entry) => entry.amount).sort()).toEqual(credits.map(formatUsd).sort());
    expect(await referralsOf(referrer)).toMatchObject({
      invitedCount: 1,
      totalCredited: formatUsd(total),
      invitees: [
        {
          email: 'u***@example.com',
          effectiveAt: expect.stringMatching(ISO_DATE_TIME),
          verifiedAt: null,
          credited: formatUsd(total),
        },
      ],
    });
  });

  it('should register me+1@gmail.com invited by me@gmail.com, and pay the referrer nothing for its spending', async () => {
    const referrer = await register('me@gmail.com');
    const { referralCode } = await referralsOf(referrer);
    const invitee = await register('me+1@gmail.com', referralCode);
    // Both signals a referral waits for: the address verified (as if its link were followed) and a top-up.
    await world.db.query('UPDATE accounts SET email_verified_at = now() WHERE id = $1', [invitee.accountId]);

    await topUp(invitee);
    expect(await world.books.balance(invitee)).toBe(TOPUP_CREDIT);
    await spend(invitee, REPLIES);

    expect(await world.books.balance(referrer)).toBe(0n);
    expect(await world.books.ledger(referrer)).toEqual([]);
    expect(await referralsOf(referrer)).toMatchObject({ invitedCount: 0, totalCredited: '0', invitees: [] });
  });
});
