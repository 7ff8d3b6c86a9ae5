import { parseUsd, formatUsd } from 'src/common/money/money';
import { usageCost } from 'src/modules/billing/pricing';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { DataSource } from 'typeorm';
import { TestGateway, TestWorker } from 'test/support/gateway';

describe('billing smoke', () => {
  let gateway: TestGateway;
  let worker: TestWorker;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    worker = await TestWorker.start();
  });
  afterAll(async () => {
    await worker.close();
    await gateway.close();
  });

  async function balanceOf(token: string): Promise<string> {
    return (await gateway.call('GET', '/console/account', { token })).body.balance;
  }

  async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + 10_000;
    let value = await read();
    while (!done(value) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      value = await read();
    }
    return value;
  }

  it('should charge exactly the usage and credit the referrer 10%', async () => {
    const model = await gateway.addModel({ inputPrice: '2.5', outputPrice: '10' });
    const referrer = await gateway.newCustomer({ balance: '1' });
    const code = (await gateway.call('GET', '/console/referrals', { token: referrer.token })).body.referralCode;
    const customer = await gateway.newCustomer({ balance: '10', referralCode: code });

    const response = await gateway.chat(customer.key, { model, messages: [{ role: 'user', content: 'Say hi' }] });
    expect(response.status).toBe(200);
    const { prompt_tokens, completion_tokens } = response.body.usage;
    const cost = usageCost(
      { inputPrice: parseUsd('2.5')!, outputPrice: parseUsd('10')! },
      prompt_tokens,
      completion_tokens,
    );

    const expected = formatUsd(parseUsd('10')! - cost);
    expect(
      await waitFor(
        () => balanceOf(customer.token),
        (b) => b === expected,
      ),
    ).toBe(expected);
    const credit = formatUsd(parseUsd('1')! + cost / 10n);
    expect(
      await waitFor(
        () => balanceOf(referrer.token),
        (b) => b === credit,
      ),
    ).toBe(credit);

    const bills = await gateway.call('GET', '/console/bills', { token: customer.token });
    expect(bills.body.data).toEqual([
      expect.objectContaining({ requestId: response.headers.get('x-request-id'), model, cost: formatUsd(cost) }),
    ]);
    const dataSource = new DataSource({ type: 'postgres', url: process.env.DATABASE_URL });
    await dataSource.initialize();
    expect(await findLedgerMismatches(dataSource)).toEqual([]);
    await dataSource.destroy();
  });
});
