import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { findDepositMismatches, findTopupMismatches } from 'src/modules/payments/topup-verifier';
import {
  ChainWatchers,
  depositsOf,
  startChainWatchers,
  TRC20_OTHER,
  TRC20_USDT,
  TRON_XPUB,
} from 'test/integration/chain-helpers';
import { TestDb } from 'test/integration/integration-helpers';
import { FAKE_TRONGRID_KEY, FakeTronGrid, startFakeTronGrid } from 'tools/fake-chains/fake-trongrid';

const USDT = { address: TRC20_USDT, symbol: 'USDT', decimals: 6, name: 'Tether USD' };
const FAKE_USDT = { address: TRC20_OTHER, symbol: 'USDT', decimals: 6, name: 'Tether USD' };

describe('Trc20Watcher against a fake TronGrid', () => {
  let db: TestDb;
  let tron: FakeTronGrid;
  let chain: ChainWatchers;
  let clock = 1_700_000_000_000;

  beforeAll(async () => {
    db = await TestDb.open();
    tron = await startFakeTronGrid(TRC20_USDT);
    chain = await startChainWatchers({ TRON_XPUB, ...tron.env, USDT_MIN_DEPOSIT: '1' });
  });
  afterEach(async () => {
    tron.pageSize = 200;
    tron.overlapPages = false;
    tron.ignoreContractFilter = false;
    expect(await findLedgerMismatches(db.dataSource)).toEqual([]);
    expect(await findTopupMismatches(db.dataSource)).toEqual([]);
    expect(await findDepositMismatches(db.dataSource)).toEqual([]);
  });
  afterAll(async () => {
    await chain?.close();
    await tron?.close();
    await db.close();
  });

  /** A new account and its TRC20 address. */
  async function newDepositor() {
    const accountId = await db.newAccount();
    const { address } = await chain.addresses.addressFor(accountId, 'TRC20');
    return { accountId, address };
  }

  function send(to: string, value: string, options: { token?: typeof USDT; confirmed?: boolean; txid?: string } = {}) {
    clock += 3_000;
    const transfer = {
      txid: options.txid ?? tron.txid(),
      from: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      to,
      value,
      token: options.token ?? USDT,
      blockTimestamp: clock,
      confirmed: options.confirmed ?? true,
    };
    tron.transfers.push(transfer);
    return transfer;
  }

  it('should credit a confirmed transfer once, paying the oldest pending order with what it carried', async () => {
    const { accountId, address } = await newDepositor();
    const older = await chain.pendingOrder(accountId, 'TRC20', 50_000_000n);
    const newer = await chain.pendingOrder(accountId, 'TRC20', 20_000_000n);
    send(address, '25000000');

    expect(await chain.trc20.run()).toBe(1);
    expect(await chain.trc20.run()).toBe(0);

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([['25000000', 'credited', 'paid']]);
    const paid = await chain.orders.findById(older.id);
    expect({ status: paid!.status, credit: paid!.credit }).toEqual({ status: 'paid', credit: 25_000_000_000n });
    expect((await chain.orders.findById(newer.id))!.status).toBe('pending');
    expect((await db.balanceOf(accountId)).balance).toBe(25_000_000_000n);
    const request = tron.requests.find((r) => r.path.includes(address))!;
    expect({
      key: request.apiKey,
      confirmed: request.query.get('only_confirmed'),
      to: request.query.get('only_to'),
      contract: request.query.get('contract_address'),
    }).toEqual({ key: FAKE_TRONGRID_KEY, confirmed: 'true', to: 'true', contract: TRC20_USDT });
  });

  it('should make a top-up of its own of a transfer no order waits for', async () => {
    const { accountId, address } = await newDepositor();
    send(address, '3500000');

    await chain.trc20.run();

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([['3500000', 'credited', 'paid']]);
    expect((await db.balanceOf(accountId)).balance).toBe(3_500_000_000n);
  });

  it('should record a transfer below the minimum without crediting it', async () => {
    const { accountId, address } = await newDepositor();
    const order = await chain.pendingOrder(accountId, 'TRC20', 5_000_000n);
    send(address, '999999');

    await chain.trc20.run();

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([['999999', 'below_minimum', null]]);
    expect((await chain.orders.findById(order.id))!.status).toBe('pending');
    expect((await db.balanceOf(accountId)).balance).toBe(0n);
  });

  it('should ignore unconfirmed transfers until they are confirmed', async () => {
    const { accountId, address } = await newDepositor();
    const transfer = send(address, '2000000', { confirmed: false });

    await chain.trc20.run();
    expect(await depositsOf(chain.dataSource, accountId)).toEqual([]);

    transfer.confirmed = true;
    await chain.trc20.run();
    expect(await depositsOf(chain.dataSource, accountId)).toEqual([['2000000', 'credited', 'paid']]);
  });

  it('should ignore another token calling itself USDT, even when the API ignores the contract filter', async () => {
    tron.ignoreContractFilter = true;
    const { accountId, address } = await newDepositor();
    send(address, '9000000', { token: FAKE_USDT });
    send(address, '9000000', { token: { ...USDT, decimals: 18 } });

    await chain.trc20.run();

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([]);
  });

  it('should page by fingerprint and credit a transfer repeated on two pages once', async () => {
    tron.pageSize = 2;
    tron.overlapPages = true;
    const { accountId, address } = await newDepositor();
    for (let i = 1; i <= 5; i++) {
      send(address, `${i}000000`);
    }

    await chain.trc20.run();

    const fingerprints = tron.requests.filter((r) => r.path.includes(address) && r.query.get('fingerprint'));
    expect(fingerprints.length).toBeGreaterThanOrEqual(3);
    expect((await depositsOf(chain.dataSource, accountId)).map(([amount]) => amount)).toEqual([
      '1000000',
      '2000000',
      '3000000',
      '4000000',
      '5000000',
    ]);
  });

  it('should number two transfers of one transaction apart', async () => {
    const { accountId, address } = await newDepositor();
    const txid = tron.txid();
    send(address, '1000000', { txid });
    clock -= 3_000;
    send(address, '2000000', { txid });

    await chain.trc20.run();

    expect((await depositsOf(chain.dataSource, accountId)).map(([amount]) => amount)).toEqual(['1000000', '2000000']);
  });

  it.each(['throttle', 'forbidden'] as const)('should back off on %s and then read the page', async (fault) => {
    const { accountId, address } = await newDepositor();
    send(address, '4000000');
    tron.fail(fault, 2);

    await chain.trc20.run();

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([['4000000', 'credited', 'paid']]);
  });

  it.each(['garbage', 'down', 'cut'] as const)(
    'should credit nothing twice nor skip anything when a later page is %s',
    async (fault) => {
      tron.pageSize = 2;
      const { accountId, address } = await newDepositor();
      for (let i = 1; i <= 5; i++) {
        send(address, `${i}000000`);
      }
      tron.fail(fault, 1, true);

      await expect(chain.trc20.run()).rejects.toThrow();
      // The first page's whole blocks are in; the cursor stands at the block the listing broke in.
      expect((await depositsOf(chain.dataSource, accountId)).map(([amount]) => amount)).toEqual(['1000000']);
      await chain.trc20.run();
      await chain.trc20.run();

      expect((await depositsOf(chain.dataSource, accountId)).map(([amount]) => amount)).toEqual([
        '1000000',
        '2000000',
        '3000000',
        '4000000',
        '5000000',
      ]);
    },
  );
});
