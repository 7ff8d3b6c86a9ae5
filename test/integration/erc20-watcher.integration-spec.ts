import { Hex } from 'viem';
import { metrics } from 'src/common/metrics/metrics';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { findDepositMismatches, findTopupMismatches } from 'src/modules/payments/orders/topup-verifier';
import { ChainWatchers, depositsOf, ETH_DEPOSIT_XPUB, startChainWatchers } from 'test/integration/chain-helpers';
import { TestDb } from 'test/integration/integration-helpers';
import { LocalEvm, startLocalEvm } from 'test/support/local-evm';
import { spawnWorker, stopWorker } from 'test/support/worker-process';
import { Client } from 'pg';

const DEPTH = 12;
/** A depth a reorg in these tests goes deeper than. */
const SHALLOW = 3;

describe('Erc20Watcher against a local Hardhat chain', () => {
  let db: TestDb;
  let evm: LocalEvm;
  let usdt: Hex;
  let chain: ChainWatchers;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await TestDb.open();
    evm = await startLocalEvm();
    usdt = await evm.deployToken();
    env = {
      ETH_XPUB: ETH_DEPOSIT_XPUB,
      ETH_RPC_URL: evm.url,
      ERC20_USDT_CONTRACT: usdt,
      ERC20_CONFIRMATIONS: String(DEPTH),
    };
    chain = await startChainWatchers(env);
  }, 90_000);
  afterEach(async () => {
    expect(await findLedgerMismatches(db.dataSource)).toEqual([]);
    expect(await findTopupMismatches(db.dataSource)).toEqual([]);
    expect(await findDepositMismatches(db.dataSource)).toEqual([]);
  });
  afterAll(async () => {
    await chain?.close();
    await evm?.stop();
    await db.close();
  });

  async function newDepositor() {
    const accountId = await db.newAccount();
    const { address } = await chain.addresses.addressFor(accountId, 'ERC20');
    return { accountId, address };
  }

  it('should credit a transfer exactly once at depth 12, not at 11, showing the confirmations meanwhile', async () => {
    const { accountId, address } = await newDepositor();
    const order = await chain.pendingOrder(accountId, 'ERC20', 30_000_000n);
    await chain.orders.setInstructions(order.id, { address, network: 'ERC20', confirmations: 0, required: DEPTH });
    await evm.transfer(usdt, address, 12_500_000n);
    await evm.mine(DEPTH - 2);

    await chain.erc20.run();
    expect(await depositsOf(chain.dataSource, accountId)).toEqual([]);
    expect((await chain.orders.findById(order.id))!.instructions).toMatchObject({ confirmations: DEPTH - 1 });

    await evm.mine(1);
    await chain.erc20.run();
    await evm.mine(3);
    await chain.erc20.run();

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([['12500000', 'credited', 'paid']]);
    expect((await db.balanceOf(accountId)).balance).toBe(12_500_000_000n);
    expect((await chain.orders.findById(order.id))!.credit).toBe(12_500_000_000n);
  });

  it('should never credit a transfer reorged away before its depth', async () => {
    const { accountId, address } = await newDepositor();
    const snapshot = await evm.snapshot();
    await evm.transfer(usdt, address, 5_000_000n);
    await evm.mine(5);
    await chain.erc20.run();

    await evm.revert(snapshot);
    await evm.mine(DEPTH + 5);
    await chain.erc20.run();

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([]);
    expect((await db.balanceOf(accountId)).balance).toBe(0n);
  });

  it("should ignore another token's transfers to our address, and USDT sent to an address not ours", async () => {
    const { accountId, address } = await newDepositor();
    const other = await evm.deployToken();
    await evm.transfer(other, address, 7_000_000n);
    await evm.transfer(usdt, '0x000000000000000000000000000000000000dEaD', 7_000_000n);
    await evm.mine(DEPTH);

    await chain.erc20.run();

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([]);
  });

  it('should record a transfer below the minimum without crediting it', async () => {
    const { accountId, address } = await newDepositor();
    await evm.transfer(usdt, address, 999_999n);
    await evm.mine(DEPTH);

    await chain.erc20.run();

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([['999999', 'below_minimum', null]]);
  });

  it('should add up transfers below the minimum and credit their sum once it reaches it', async () => {
    const { accountId, address } = await newDepositor();
    const order = await chain.pendingOrder(accountId, 'ERC20', 5_000_000n);
    for (let sent = 0; sent < 2; sent++) {
      await evm.transfer(usdt, address, 400_000n);
      await evm.mine(DEPTH);
      await chain.erc20.run();
    }
    expect(await depositsOf(chain.dataSource, accountId)).toEqual([
      ['400000', 'below_minimum', null],
      ['400000', 'below_minimum', null],
    ]);
    expect((await db.balanceOf(accountId)).balance).toBe(0n);

    await evm.transfer(usdt, address, 400_000n);
    await evm.mine(DEPTH);
    await chain.erc20.run();

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([
      ['400000', 'credited', 'paid'],
      ['400000', 'credited', 'paid'],
      ['400000', 'credited', 'paid'],
    ]);
    expect(await orderIdsOf(chain, accountId)).toEqual([order.id]);
    expect((await chain.orders.findById(order.id))!).toMatchObject({ amount: 1_200_000n, credit: 1_200_000_000n });
    expect((await db.balanceOf(accountId)).balance).toBe(1_200_000_000n);
  });

  it('should mark a credited transfer reorged deeper than its depth, with its order, and leave the credit to the operator', async () => {
    const shallow = await startChainWatchers({ ...env, ERC20_CONFIRMATIONS: String(SHALLOW) });
    try {
      const { accountId, address } = await newDepositor();
      const reorgedBefore = await reorgedCount();
      const snapshot = await evm.snapshot();
      await evm.transfer(usdt, address, 4_000_000n);
      await evm.mine(SHALLOW - 1);
      await shallow.erc20.run();
      expect(await depositsOf(chain.dataSource, accountId)).toEqual([['4000000', 'credited', 'paid']]);

      await evm.revert(snapshot);
      await evm.mine(SHALLOW + 2);
      await shallow.erc20.run();

      expect(await depositsOf(chain.dataSource, accountId)).toEqual([['4000000', 'reorged', 'paid']]);
      const [orderId] = await orderIdsOf(chain, accountId);
      expect((await chain.orders.findById(orderId))!.reorgedAt).toBeInstanceOf(Date);
      expect((await db.balanceOf(accountId)).balance).toBe(4_000_000_000n);
      expect(await reorgedCount()).toBe(reorgedBefore + 1);
    } finally {
      await shallow.close();
    }
  });

  it('should stop looking at a credited transfer once its block is finalized', async () => {
    const shallow = await startChainWatchers({ ...env, ERC20_CONFIRMATIONS: String(SHALLOW) });
    try {
      const { accountId, address } = await newDepositor();
      const snapshot = await evm.snapshot();
      await evm.transfer(usdt, address, 3_000_000n);
      await evm.mine(SHALLOW - 1);
      await shallow.erc20.run();
      // Hardhat calls its head finalized: the next run finds the credited block final.
      await shallow.erc20.run();

      await evm.revert(snapshot);
      await evm.mine(SHALLOW + 2);
      await shallow.erc20.run();

      expect(await depositsOf(chain.dataSource, accountId)).toEqual([['3000000', 'credited', 'paid']]);
    } finally {
      await shallow.close();
    }
  });

  it('should credit once when two workers watch at once', async () => {
    const second = await startChainWatchers(env);
    try {
      const { accountId, address } = await newDepositor();
      await evm.transfer(usdt, address, 2_000_000n);
      await evm.mine(DEPTH);

      const runs = await Promise.all([chain.erc20.run(), second.erc20.run(), chain.erc20.run(), second.erc20.run()]);
      await chain.erc20.run();

      // The lease lets one run at a time: the others found it taken (null) or nothing left to do (0).
      expect(runs.filter((recorded) => recorded === 1)).toHaveLength(1);
      expect(await depositsOf(chain.dataSource, accountId)).toEqual([['2000000', 'credited', 'paid']]);
    } finally {
      await second.close();
    }
  });

  it('should resume from its cursor after a restart, and stop without advancing while the chain is away', async () => {
    const { accountId, address } = await newDepositor();
    await evm.transfer(usdt, address, 3_000_000n);
    await evm.mine(DEPTH);
    const away = await startChainWatchers({ ...env, ETH_RPC_URL: 'http://127.0.0.1:9' });
    try {
      await expect(away.erc20.run()).rejects.toThrow(/JSON-RPC endpoint failed/);
    } finally {
      await away.close();
    }
    const restarted = await startChainWatchers(env);
    try {
      await restarted.erc20.run();
    } finally {
      await restarted.close();
    }

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([['3000000', 'credited', 'paid']]);
  });

  it('should roll back a batch whose worker is killed in the middle, leaving the cursor where it was', async () => {
    const { accountId, address } = await newDepositor();
    await evm.transfer(usdt, address, 6_000_000n);
    await evm.mine(DEPTH);
    const cursorBefore = await cursorOf(chain);
    // Holding the account's row keeps the worker's credit waiting inside its transaction.
    const holder = new Client({ connectionString: process.env.DATABASE_URL });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    const worker = await spawnWorker({ ...env, CHAIN_WATCH_EVERY_MS: '200' });
    try {
      await waitFor(async () => {
        const [{ waiting }] = await chain.dataSource.query<{ waiting: number }[]>(
          `SELECT COUNT(*)::int AS waiting FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return waiting > 0;
      });
    } finally {
      await stopWorker(worker);
      await holder.query('ROLLBACK');
      await holder.end();
    }
    // The killed worker's lease on the network stays until it expires (CHAIN_LEASE_TTL_MS): until
    // then a run finds the network taken and does nothing. The test expires it rather than wait.
    expect(await chain.erc20.run()).toBeNull();
    await chain.dataSource.query(
      "UPDATE chain_watch_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE network = 'ERC20'",
    );

    expect(await depositsOf(chain.dataSource, accountId)).toEqual([]);
    expect(await cursorOf(chain)).toBe(cursorBefore);
    await chain.erc20.run();
    expect(await depositsOf(chain.dataSource, accountId)).toEqual([['6000000', 'credited', 'paid']]);
  }, 60_000);
});

async function orderIdsOf(chain: ChainWatchers, accountId: string): Promise<string[]> {
  const rows = await chain.dataSource.query<{ order_id: string }[]>(
    'SELECT DISTINCT order_id FROM chain_deposits WHERE account_id = $1 AND order_id IS NOT NULL',
    [accountId],
  );
  return rows.map((row) => row.order_id);
}

async function reorgedCount(): Promise<number> {
  const { values } = await metrics.depositReorged.get();
  return values.find((value) => value.labels.network === 'ERC20')?.value ?? 0;
}

async function cursorOf(chain: ChainWatchers): Promise<string | null> {
  const [row] = await chain.dataSource.query<{ block: string }[]>(
    "SELECT block FROM chain_cursors WHERE network = 'ERC20'",
  );
  return row?.block ?? null;
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error('the condition did not come true in time');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
