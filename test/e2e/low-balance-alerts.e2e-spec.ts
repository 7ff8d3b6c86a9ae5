import { formatUsd } from 'src/common/money/money';
import { LowBalanceAlerts } from 'src/modules/balance-alerts/low-balance-alerts.service';
import {
  Books,
  costOf,
  creditOf,
  eventually,
  mockUsage,
  pricesOf,
  sleep,
  usd,
  userMessages,
} from 'test/e2e/billing-helpers';
import { Customer, TestGateway, TestWorker } from 'test/support/gateway';
import { SmtpSink, tokenOf } from 'test/support/smtp-sink';

// $0.1 a token: one request of the mock upstream costs a visible amount.
const PRICE = '100000';

describe('low-balance alerts and referral credit after verification (worker, real SMTP)', () => {
  let sink: SmtpSink;
  let gateway: TestGateway;
  let worker: TestWorker;
  let books: Books;
  let model: string;

  beforeAll(async () => {
    sink = await SmtpSink.create();
    const env = {
      SMTP_URL: sink.url,
      CONSOLE_URL: 'https://console.example.com',
      REQUIRE_EMAIL_VERIFICATION: 'false',
      MAIL_RETRY_DELAY_MS: '200',
    };
    gateway = await TestGateway.start(env);
    worker = await TestWorker.start(env);
    books = await Books.open(gateway);
    model = await gateway.addModel({ inputPrice: PRICE, outputPrice: PRICE, maxOutputTokens: 20 });
  });

  afterAll(async () => {
    await books.close();
    await worker.close();
    await gateway.close();
    await sink.stop();
  });

  const setAlert = (customer: Customer, lowBalanceThreshold: unknown) =>
    gateway.call('PUT', '/console/account/alerts', { token: customer.token, body: { lowBalanceThreshold } });
  const alertOf = async (customer: Customer) =>
    (await gateway.call('GET', '/console/account/alerts', { token: customer.token })).body;
  // Customers are mailed a verification link at registration too; these are the alerts.
  const alertMails = (customer: Customer) => sink.to(customer.email).filter((mail) => /balance/i.test(mail.subject));
  const waitForAlerts = (customer: Customer, count: number) =>
    eventually(
      () => Promise.resolve(alertMails(customer)),
      (mails) => mails.length >= count,
    );

  /** One request of the mock upstream, settled: the balance it leaves. */
  async function spend(customer: Customer): Promise<bigint> {
    const before = await books.balance(customer);
    const messages = userMessages();
    const answer = await gateway.chat(customer.key, { model, messages, max_tokens: 10 });
    expect(answer.status).toBe(200);
    const after = before - costOf(pricesOf(PRICE, PRICE), mockUsage(messages));
    expect(await books.waitForBalance(customer, after)).toBe(after);
    return after;
  }

  it('should validate the threshold: a positive USD string, or null for none', async () => {
    const customer = await gateway.newCustomer();
    expect(await alertOf(customer)).toEqual({ lowBalanceThreshold: null, alertSent: false });
    for (const bad of [undefined, 5, '0', '-1', '1.0000000001', '2000000']) {
      const answer = await setAlert(customer, bad);
      expect(answer.status).toBe(400);
      expect(answer.body.error.param).toBe('lowBalanceThreshold');
    }
    expect((await setAlert(customer, '2.5')).body).toEqual({ lowBalanceThreshold: '2.5', alertSent: false });
    expect((await setAlert(customer, null)).body).toEqual({ lowBalanceThreshold: null, alertSent: false });
    expect(await alertOf(customer)).toEqual({ lowBalanceThreshold: null, alertSent: false });
  });

  it('should mail once when the balance falls below the threshold, and again only after a credit re-armed it', async () => {
    const customer = await gateway.newCustomer({ balance: '10' });
    expect((await setAlert(customer, '9')).status).toBe(200);

    await spend(customer);
    const [first] = await waitForAlerts(customer, 1);
    expect(first.subject).toBe('Your balance is below $9');
    expect((await alertOf(customer)).alertSent).toBe(true);

    // More settlements below the threshold send nothing more.
    let balance = await spend(customer);
    balance = await spend(customer);
    await sleep(500);
    expect(alertMails(customer)).toHaveLength(1);

    // A credit that lifts the balance back to the threshold or above re-arms the alert.
    const lift = usd('9.5') - balance;
    const credited = await gateway.admin('POST', `/admin/accounts/${customer.accountId}/adjustments`, {
      amount: formatUsd(lift),
      reason: 'top-up in a test',
    });
    expect(credited.status).toBe(201);
    expect(await alertOf(customer)).toEqual({ lowBalanceThreshold: '9', alertSent: false });

    await spend(customer);
    await waitForAlerts(customer, 2);
    await sleep(300);
    expect(alertMails(customer)).toHaveLength(2);
  });

  it('should send one mail when several settlements check the same account at once', async () => {
    const customer = await gateway.newCustomer({ balance: '1' });
    expect((await setAlert(customer, '5')).status).toBe(200);
    const alerts = worker.app.get(LowBalanceAlerts);
    await Promise.all(Array.from({ length: 8 }, () => alerts.checkAfterSettlement([customer.accountId])));
    await waitForAlerts(customer, 1);
    await sleep(500);
    expect(alertMails(customer)).toHaveLength(1);
  });

  it('should credit a referral only once the invitee verified its e-mail, and list the invitee masked', async () => {
    const referrer = await gateway.newCustomer({ balance: '0' });
    const referralCode: string = (await gateway.call('GET', '/console/referrals', { token: referrer.token })).body
      .referralCode;
    const invitee = await gateway.newCustomer({ balance: '10', referralCode, verified: false });
    const referrals = async () => (await gateway.call('GET', '/console/referrals', { token: referrer.token })).body;

    await spend(invitee);
    expect(await referrals()).toMatchObject({ invitedCount: 0, totalCredited: '0', invitees: [] });

    const [mail] = await sink.waitFor(invitee.email);
    expect((await gateway.call('POST', '/console/auth/verify-email', { body: { token: tokenOf(mail) } })).status).toBe(
      200,
    );
    await spend(invitee);
    const credit = creditOf(costOf(pricesOf(PRICE, PRICE), mockUsage(userMessages())));
    const summary = await eventually(referrals, (body) => body.totalCredited !== '0');
    expect(summary).toMatchObject({
      referralCode,
      invitedCount: 1,
      totalCredited: formatUsd(credit),
      invitees: [{ email: 'u***@example.com', credited: formatUsd(credit) }],
    });
    expect(Date.parse(summary.invitees[0].verifiedAt)).toBeGreaterThan(Date.now() - 60_000);
  });
});
