import { metricsRegistry } from 'src/common/metrics/metrics';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { DepositCrediting } from 'src/modules/payments/chain/deposit-crediting.service';
import { findDepositMismatches, findTopupMismatches } from 'src/modules/payments/orders/topup-verifier';
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

const PER_MINUTE = 120;
const EVERY_MS = 15_000;
/** A run's share: 120 a minute over 4 runs a minute. */
const PER_RUN = 30;
const IDLE = 500;

/**
 * First in the file, so that it alone watches (the run's files share a database, and the lease): the
 * bound the README states: with N addresses due and a run's share of C calls, a hot address is
 * visited at every run and every address within ⌈2N / C⌉ runs. Minutes pass on the budget's clock,
 * one run's worth before each run, so the test runs them back to back.
 */
describe('Trc20Watcher within its TronGrid budget', () => {
  let db: TestDb;
  let tron: FakeTronGrid;
  let chain: ChainWatchers;
  let now = Date.now();

  beforeAll(async () => {
    db = await TestDb.open();
    tron = await startFakeTronGrid(TRC20_USDT);
    chain = await startChainWatchers(
      {
        TRON_XPUB,
        ...tron.env,
        TRONGRID_MAX_CALLS_PER_MINUTE: String(PER_MINUTE),
        CHAIN_WATCH_EVERY_MS: String(EVERY_MS),
      },
      () => now,
    );
  });
  afterAll(async () => {
    expect(await findLedgerMismatches(db.dataSource)).toEqual([]);
    expect(await findTopupMismatches(db.dataSource)).toEqual([]);
    expect(await findDepositMismatches(db.dataSource)).toEqual([]);
    await chain?.close();
    await tron?.close();
    await db.close();
  });

  async function newDepositor() {
    const accountId = await db.newAccount();
    const { address } = await chain.addresses.addressFor(accountId, 'TRC20');
    return { accountId, address };
  }

  it('should credit a pending order at the next run, visit every address within the bound, and keep to the budget', async () => {
    const idle: string[] = [];
    for (let i = 0; i < IDLE; i++) {
      idle.push((await newDepositor()).accountId);
    }
    const payer = await newDepositor();
    await chain.pendingOrder(payer.accountId, 'TRC20', 10_000_000n);
    const broken = await newDepositor();
    await chain.pendingOrder(broken.accountId, 'TRC20', 10_000_000n);
    tron.failingAddresses.add(broken.address);
    tron.transfers.push({
      txid: tron.txid(),
      from: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      to: payer.address,
      value: '10000000',
      token: USDT,
      blockTimestamp: now,
      confirmed: true,
    });

    const callsPerRun: number[] = [];
    const bound = Math.ceil((2 * (IDLE + 2)) / PER_RUN);
    let unvisited = IDLE;
    while (unvisited > 0 && callsPerRun.length < bound + 5) {
      // Every account reads its address, as the console shows it, before every run: it makes none hot.
      await Promise.all(idle.map((accountId) => chain.addresses.listFor(accountId)));
      const before = tron.requests.length;
      await chain.trc20.run();
      callsPerRun.push(tron.requests.length - before);
      if (callsPerRun.length === 1) {
        // The failing address, visited in the same run, delayed it in nothing.
        expect(await depositsOf(chain.dataSource, payer.accountId)).toEqual([['10000000', 'credited', 'paid']]);
      }
      unvisited = await idleUnvisited();
      now += EVERY_MS;
    }

    expect(unvisited).toBe(0);
    expect(callsPerRun.length).toBeLessThanOrEqual(bound);
    expect(Math.max(...callsPerRun)).toBeLessThanOrEqual(PER_RUN);
    // Runs are EVERY_MS apart: any four in a row are within one minute.
    for (let i = 0; i + 4 <= callsPerRun.length; i++) {
      expect(callsPerRun.slice(i, i + 4).reduce((sum, calls) => sum + calls, 0)).toBeLessThanOrEqual(PER_MINUTE);
    }
    // The hot addresses were visited at every run, the failing one too (and failed each time).
    const brokenCalls = tron.requests.filter((request) => request.path.includes(broken.address)).length;
    expect(brokenCalls).toBe(callsPerRun.length);
    expect(await depositsOf(chain.dataSource, broken.accountId)).toEqual([]);
  }, 300_000);

  async function idleUnvisited(): Promise<number> {
    const [{ count }] = await chain.dataSource.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM deposit_addresses WHERE network = 'TRC20' AND visited_at IS NULL`,
    );
    return count;
  }
});

describe('Trc20Watcher against a fake TronGrid', () => {
  let db: TestDb;
  let tron: FakeTronGrid;
  let chain: ChainWatchers;
  let clock = 1_700_000_000_000;

  beforeAll(async () => {
    db = await TestDb.open();
    tron = await startFakeTronGrid(TRC20_USDT);
    // A budget these tests never reach: the budget's own tests are in trc20-watcher-budget.
    chain = await startChainWatchers({
      TRON_XPUB,
      ...tron.env,
      USDT_MIN_DEPOSIT: '1',
      TRONGRID_MAX_CALLS_PER_MINUTE: '100000',
    });
  });
  afterEach(async () => {
    tron.pageSize = 200;
    tron.overlapPages = false;
    tron.ignoreContractFilter = false;
    tron.failingAddresses.clear();
    tron.unindexed.clear();
    jest.restoreAllMocks();
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
    await chain.pendingOrder(accountId, 'TRC20', 2_000_000n);
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

      const failures = await addressFailures();
      // The run goes on past the address; the failure is counted.
      await chain.trc20.run();
      expect(await addressFailures()).toBe(failures + 1);
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

  describe('a transfer is one deposit by its event index in its transaction', () => {
    /** Deposits of the account as [event index, amount], oldest first. */
    async function indexed(accountId: string): Promise<[number, string][]> {
      const rows = await chain.dataSource.query<{ event_index: number; amount: string }[]>(
        `SELECT event_index, amount FROM chain_deposits WHERE account_id = $1 ORDER BY seq`,
        [accountId],
      );
      return rows.map((row) => [row.event_index, row.amount]);
    }

    /** One transaction (one block) paying each of `payments` in turn: an exchange's batch payout. */
    function batch(payments: [string, string][]): string {
      const txid = tron.txid();
      send(payments[0][0], payments[0][1], { txid });
      for (const [to, value] of payments.slice(1)) {
        clock -= 3_000;
        send(to, value, { txid });
      }
      return txid;
    }

    it('should credit both accounts a transaction pays, exactly', async () => {
      const [alice, bob] = [await newDepositor(), await newDepositor()];
      batch([
        [alice.address, '7000000'],
        [bob.address, '9000000'],
      ]);

      await chain.trc20.run();

      expect(await indexed(alice.accountId)).toEqual([[0, '7000000']]);
      expect(await indexed(bob.accountId)).toEqual([[1, '9000000']]);
      expect((await db.balanceOf(alice.accountId)).balance).toBe(7_000_000_000n);
      expect((await db.balanceOf(bob.accountId)).balance).toBe(9_000_000_000n);
      // The batch's events were read once for both addresses.
      expect(tron.requests.filter((r) => r.path.endsWith('/events')).length).toBeGreaterThan(0);
    });

    it('should credit twice two identical transfers of one transaction to one address', async () => {
      const { accountId, address } = await newDepositor();
      batch([
        [address, '2000000'],
        [address, '2000000'],
      ]);

      expect(await chain.trc20.run()).toBe(2);
      expect(await chain.trc20.run()).toBe(0);

      expect(await indexed(accountId)).toEqual([
        [0, '2000000'],
        [1, '2000000'],
      ]);
      expect((await db.balanceOf(accountId)).balance).toBe(4_000_000_000n);
    });

    it('should credit once a batch listed on two pages, its events on two pages too', async () => {
      tron.pageSize = 2;
      tron.overlapPages = true;
      const [alice, bob] = [await newDepositor(), await newDepositor()];
      batch([
        [alice.address, '1000000'],
        [bob.address, '3000000'],
        [alice.address, '1000000'],
        [alice.address, '5000000'],
      ]);

      await chain.trc20.run();
      await chain.trc20.run();

      expect(await indexed(alice.accountId)).toEqual([
        [0, '1000000'],
        [2, '1000000'],
        [3, '5000000'],
      ]);
      expect(await indexed(bob.accountId)).toEqual([[1, '3000000']]);
    });

    it('should credit once when the worker dies in the middle of a batch', async () => {
      const [alice, bob] = [await newDepositor(), await newDepositor()];
      batch([
        [alice.address, '1000000'],
        [alice.address, '2000000'],
        [bob.address, '4000000'],
      ]);
      const crediting = chain.app.get(DepositCrediting);
      const record = crediting.record.bind(crediting);
      let calls = 0;
      jest.spyOn(crediting, 'record').mockImplementation(async (...args) => {
        if (++calls === 2) {
          throw new Error('the worker died');
        }
        return record(...args);
      });

      await expect(chain.trc20.run()).rejects.toThrow('the worker died');
      // Alice's first transfer went with the transaction that died.
      expect(await indexed(alice.accountId)).toEqual([]);
      jest.restoreAllMocks();
      await chain.trc20.run();
      await chain.trc20.run();

      expect(await indexed(alice.accountId)).toEqual([
        [0, '1000000'],
        [1, '2000000'],
      ]);
      expect(await indexed(bob.accountId)).toEqual([[2, '4000000']]);
      expect((await db.balanceOf(alice.accountId)).balance).toBe(3_000_000_000n);
    });

    it('should keep a deposit numbered by the old listing once, and credit what that numbering lost', async () => {
      const [alice, bob] = [await newDepositor(), await newDepositor()];
      const txid = batch([
        [alice.address, '500000'],
        [bob.address, '6000000'],
      ]);
      // As the migration left it: Alice's transfer at her listing's 0, Bob's dropped as its duplicate,
      // and Alice's cursor at the batch's block (read again at every visit).
      await chain.dataSource.query(
        `INSERT INTO chain_deposits (network, txid, event_index, numbering, address, account_id, amount, status)
         VALUES ('TRC20', $1, 0, 'listing', $2, $3, 500000, 'below_minimum')`,
        [txid, alice.address, alice.accountId],
      );
      await chain.dataSource.query(`UPDATE deposit_addresses SET cursor_ms = $1 WHERE address = $2`, [
        clock,
        alice.address,
      ]);

      await chain.trc20.run();

      expect(await indexed(alice.accountId)).toEqual([[0, '500000']]);
      expect(await indexed(bob.accountId)).toEqual([[1, '6000000']]);
    });

    it('should wait for a transaction whose events are not indexed yet, counting the failure', async () => {
      const { accountId, address } = await newDepositor();
      const { txid } = send(address, '8000000');
      tron.unindexed.add(txid);
      const failures = await addressFailures();

      await chain.trc20.run();
      expect(await indexed(accountId)).toEqual([]);
      expect(await addressFailures()).toBe(failures + 1);

      tron.unindexed.delete(txid);
      await chain.trc20.run();
      expect(await indexed(accountId)).toEqual([[0, '8000000']]);
    });
  });

  it('should go on with the other addresses when TronGrid fails one', async () => {
    const [broken, fine] = [await newDepositor(), await newDepositor()];
    tron.failingAddresses.add(broken.address);
    send(broken.address, '2000000');
    send(fine.address, '3000000');

    await chain.trc20.run();

    expect(await depositsOf(chain.dataSource, broken.accountId)).toEqual([]);
    expect(await depositsOf(chain.dataSource, fine.accountId)).toEqual([['3000000', 'credited', 'paid']]);
  });

  async function addressFailures(): Promise<number> {
    const metric = await metricsRegistry.getSingleMetric('gateway_chain_watch_address_failures_total')!.get();
    return metric.values.find((value) => value.labels.network === 'TRC20')?.value ?? 0;
  }
});
