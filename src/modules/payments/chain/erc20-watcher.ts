import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ChainCursorsRepository } from 'src/modules/payments/chain/chain-cursors.repository';
import { withChainLease } from 'src/modules/payments/chain/chain-lease';
import { DepositAddressEntity } from 'src/modules/payments/chain/deposit-address.entity';
import { DepositAddressesRepository } from 'src/modules/payments/chain/deposit-addresses.repository';
import { DepositCrediting, DepositResult } from 'src/modules/payments/chain/deposit-crediting.service';
import { Erc20Finality } from 'src/modules/payments/chain/erc20-finality';
import { Erc20Logs, TransferLog } from 'src/modules/payments/chain/erc20-logs';
import { ChainUnavailable } from 'src/modules/payments/chain/trongrid-client';
import { TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';
import { DataSource } from 'typeorm';

/** eth_getLogs ranges: providers refuse larger ones. */
const RANGE_BLOCKS = 2_000n;
const RANGES_PER_RUN = 25;
/** Where the first run ever starts, behind the chain's safe block: about a day and a half of Ethereum. */
const FIRST_RUN_LOOKBACK = 10_000n;

/**
 * The ERC20 watcher: the token's Transfer logs to our addresses, block range by block range up to the
 * safe block (`ERC20_CONFIRMATIONS` deep, or finalized), each range credited in one transaction with
 * the cursor's advance. A log whose block is no longer the canonical one at its height stops the run
 * before it is credited: a reorg is waited out, never credited. What it credited is watched until
 * final (Erc20Finality).
 */
@Injectable()
export class Erc20Watcher {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly addresses: DepositAddressesRepository,
    private readonly cursors: ChainCursorsRepository,
    private readonly orders: TopupOrdersRepository,
    private readonly crediting: DepositCrediting,
    private readonly finality: Erc20Finality,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Deposits newly recorded, or null when ERC20 is off or another worker holds the lease. */
  async run(): Promise<number | null> {
    const erc20 = this.config.payments.chains.erc20;
    if (!erc20) {
      return null;
    }
    const chain = new Erc20Logs(erc20);
    return withChainLease(this.dataSource, 'ERC20', async () => {
      try {
        return await this.watch(chain, erc20.confirmations);
      } catch (error) {
        if (error instanceof ChainUnavailable) {
          this.logger.warn({ network: 'ERC20', err: error.message }, 'chain watch stopped');
        }
        throw error;
      }
    });
  }

  private async watch(chain: Erc20Logs, depth: number | 'finalized'): Promise<number> {
    // What was credited before is looked at first: a block this run reads is never final yet to it.
    await this.finality.check(chain);
    const head = await chain.head();
    const safe = depth === 'finalized' ? await chain.finalized() : head - BigInt(depth - 1);
    // Read after the head: a transfer in a block up to it was sent to an address that existed by then.
    const ours = new Map((await this.addresses.listByNetwork('ERC20')).map((row) => [row.address.toLowerCase(), row]));
    let cursor = (await this.cursors.get('ERC20')) ?? (safe > FIRST_RUN_LOOKBACK ? safe - FIRST_RUN_LOOKBACK : 0n);
    let recorded = 0;
    for (let range = 0; range < RANGES_PER_RUN && cursor < safe; range++) {
      const to = cursor + RANGE_BLOCKS < safe ? cursor + RANGE_BLOCKS : safe;
      const logs = ours.size === 0 ? [] : await chain.transfersTo([...ours.keys()], cursor + 1n, to);
      await chain.checkCanonical(logs);
      recorded += await this.commit(logs, ours, to);
      cursor = to;
    }
    await this.showConfirmations(chain, ours, safe, head);
    metrics.chainWatchLagBlocks.set({ network: 'ERC20' }, Number(head - cursor));
    metrics.chainWatchLastSuccess.set({ network: 'ERC20' }, Date.now() / 1000);
    return recorded;
  }

  private async commit(logs: TransferLog[], ours: Map<string, DepositAddressEntity>, to: bigint): Promise<number> {
    const results = await this.dataSource.transaction(async (manager) => {
      const done: DepositResult[] = [];
      for (const log of logs) {
        const address = ours.get(log.to.toLowerCase())!;
        const transfer = { ...log, network: 'ERC20' as const, address: address.address };
        done.push(await this.crediting.record(manager, transfer, address.accountId));
      }
      await this.cursors.save(manager, 'ERC20', to);
      return done;
    });
    await this.crediting.announce('ERC20', results);
    return results.filter((result) => result.outcome !== 'duplicate').length;
  }

  /** Transfers not yet deep enough show on their account's pending orders as `confirmations` so far. */
  private async showConfirmations(
    chain: Erc20Logs,
    ours: Map<string, DepositAddressEntity>,
    safe: bigint,
    head: bigint,
  ): Promise<void> {
    if (ours.size === 0 || head <= safe || head - safe > RANGE_BLOCKS) {
      return;
    }
    for (const log of await chain.transfersTo([...ours.keys()], safe + 1n, head)) {
      const address = ours.get(log.to.toLowerCase())!;
      await this.orders.setConfirmations(address.accountId, 'ERC20', Number(head - log.blockNumber + 1n));
    }
  }
}
