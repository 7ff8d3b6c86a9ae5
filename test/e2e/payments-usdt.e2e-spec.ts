import { eventually } from 'test/e2e/billing-helpers';
import { usePaymentsWorld } from 'test/e2e/payments-helpers';
import { TRC20_USDT, TRON_XPUB } from 'test/integration/chain-helpers';
import { FakeTronGrid, startFakeTronGrid } from 'tools/fake-chains/fake-trongrid';

const USDT = { address: TRC20_USDT, symbol: 'USDT', decimals: 6, name: 'Tether USD' };

describe('USDT top-ups (TRC20 through the worker, against a fake TronGrid)', () => {
  // 20 calls a run (a run every 300 ms): the budget's bound is the integration test's.
  const env: Record<string, string> = { TRON_XPUB, CHAIN_WATCH_EVERY_MS: '300', TRONGRID_MAX_CALLS_PER_MINUTE: '4000' };
  let tron: FakeTronGrid;
  beforeAll(async () => {
    tron = await startFakeTronGrid(TRC20_USDT);
    Object.assign(env, tron.env);
  });
  const world = usePaymentsWorld({ env });
  afterAll(() => tron.close());

  function send(to: string, value: string, txid = tron.txid()) {
    tron.transfers.push({
      txid,
      from: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      to,
      value,
      token: USDT,
      blockTimestamp: Date.now(),
      confirmed: true,
    });
  }

  it('should give each account its own address, the same one every time', async () => {
    const [alice, bob] = [await world.gateway.newCustomer(), await world.gateway.newCustomer()];

    const first = await world.gateway.call('GET', '/console/deposit-addresses', { token: alice.token });
    const again = await world.gateway.call('GET', '/console/deposit-addresses', { token: alice.token });
    const other = await world.gateway.call('GET', '/console/deposit-addresses', { token: bob.token });

    expect(first).toMatchObject({
      status: 200,
      body: { data: [{ network: 'TRC20', address: expect.stringMatching(/^T/), minimum: '1.000000' }] },
    });
    expect(again.body).toEqual(first.body);
    expect(other.body.data[0].address).not.toBe(first.body.data[0].address);
  });

  it('should refuse a network that is not configured, naming network', async () => {
    const customer = await world.gateway.newCustomer();
    const response = await world.gateway.call('POST', '/console/topups', {
      token: customer.token,
      body: { currency: 'USDT', network: 'ERC20', amount: '10' },
    });
    expect({ status: response.status, param: response.body.error?.param }).toEqual({ status: 400, param: 'network' });
  });

  it('should show the address on a USDT order and credit the transfer the worker watches', async () => {
    const customer = await world.gateway.newCustomer({ balance: '0' });
    const created = await world.gateway.call('POST', '/console/topups', {
      token: customer.token,
      body: { currency: 'USDT', network: 'TRC20', amount: '25' },
    });
    expect(created.status).toBe(201);
    const { address } = created.body.instructions;
    expect(created.body).toMatchObject({
      status: 'pending',
      currency: 'USDT',
      network: 'TRC20',
      amount: '25.000000',
      credit: '25',
      instructions: { address, network: 'TRC20', confirmations: 0, required: 1, minimum: '1.000000' },
    });

    send(address, '24500000');
    send(address, '500000');

    const paid = await eventually(
      () => world.gateway.call('GET', `/console/topups/${created.body.id}`, { token: customer.token }),
      (response) => response.body.status === 'paid',
      15_000,
    );
    // The transfer credits what it carried, not what the order asked.
    expect(paid.body).toMatchObject({ amount: '24.500000', credit: '24.5' });
    expect((await world.gateway.call('GET', '/console/account', { token: customer.token })).body.balance).toBe('24.5');
    const small = await eventually(
      () => world.gateway.admin('GET', '/admin/deposits?status=below_minimum'),
      (response) => response.body.data.some((deposit: { address: string }) => deposit.address === address),
      15_000,
    );
    expect(small.body.data.find((deposit: { address: string }) => deposit.address === address)).toMatchObject({
      network: 'TRC20',
      amount: '0.500000',
      status: 'below_minimum',
    });
    const metrics = await fetch(world.workerMetricsUrl).then((response) => response.text());
    expect(metrics).toMatch(/^gateway_deposits_total\{network="TRC20",outcome="credited"\} [1-9]/m);
    expect(metrics).toMatch(/^gateway_chain_watch_last_success_timestamp_seconds\{network="TRC20"\} \d/m);
  });

  it('should credit each customer a batch payout pays in one transaction, and show both to the operator', async () => {
    const [alice, bob] = [
      await world.gateway.newCustomer({ balance: '0' }),
      await world.gateway.newCustomer({ balance: '0' }),
    ];
    const addressOf = async (token: string) =>
      (await world.gateway.call('GET', '/console/deposit-addresses', { token })).body.data[0].address as string;
    const [aliceAddress, bobAddress] = [await addressOf(alice.token), await addressOf(bob.token)];
    await world.gateway.call('POST', '/console/topups', {
      token: alice.token,
      body: { currency: 'USDT', network: 'TRC20', amount: '3' },
    });
    await world.gateway.call('POST', '/console/topups', {
      token: bob.token,
      body: { currency: 'USDT', network: 'TRC20', amount: '4' },
    });
    const txid = tron.txid();
    send(aliceAddress, '3000000', txid);
    send(bobAddress, '4000000', txid);

    const listed = await eventually(
      () => world.gateway.admin('GET', '/admin/deposits?network=TRC20'),
      (response) => response.body.data.filter((deposit: { txid: string }) => deposit.txid === txid).length === 2,
      15_000,
    );
    expect(
      listed.body.data
        .filter((deposit: { txid: string }) => deposit.txid === txid)
        .map((deposit: { address: string; eventIndex: number; amount: string; status: string }) => [
          deposit.address,
          deposit.eventIndex,
          deposit.amount,
          deposit.status,
        ])
        // Two events of one transaction: the watcher may store them in either order (the list is newest stored first).
        .sort((a: [string, number], b: [string, number]) => b[1] - a[1]),
    ).toEqual([
      [bobAddress, 1, '4.000000', 'credited'],
      [aliceAddress, 0, '3.000000', 'credited'],
    ]);
    const balance = async (token: string) =>
      (await world.gateway.call('GET', '/console/account', { token })).body.balance as string;
    expect([await balance(alice.token), await balance(bob.token)]).toEqual(['3', '4']);
  });
});
