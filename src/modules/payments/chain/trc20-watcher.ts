import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { TronConfig } from 'src/config/chain-config';
import { ChainDepositsRepository } from 'src/modules/payments/chain/chain-deposits.repository';
import { withChainLease } from 'src/modules/payments/chain/chain-lease';
import { DepositAddressEntity } from 'src/modules/payments/chain/deposit-address.entity';
import { DepositAddressesRepository } from 'src/modules/payments/chain/deposit-addresses.repository';
import { DepositCrediting, DepositResult } from 'src/modules/payments/chain/deposit-crediting.service';
import { TronGridBudget } from 'src/modules/payments/chain/trongrid-budget';
import {
  BudgetSpent,
  ChainUnavailable,
  TronEvent,
  TronGridClient,
  TronTransfer,
} from 'src/modules/payments/chain/trongrid-client';
import { ChainTransfer } from 'src/modules/payments/chain/usdt-network';
import { DataSource } from 'typeorm';

const PAGES_PER_ADDRESS = 10;
const USDT_DECIMALS = 6;

/** One run's TronGrid: the client on the run's budget, and the events already read (a batch pays several of ours). */
interface RunReader {
  client: TronGridClient;
  events: Map<string, TronEvent[]>;
}

/**
 * The TRC20 watcher: each due address's confirmed USDT transfers since its cursor. The address's
 * listing only finds the transactions that paid it; each such transaction's events give every transfer
 * its identity (the chain's event index), so a transaction paying several of our addresses, or one
 * address twice, is as many deposits. They are credited in one transaction with the cursor's advance,
 * so a visit that fails anywhere leaves the cursor where the last commit put it.
 *
 * Each run makes at most its share of TRONGRID_MAX_CALLS_PER_MINUTE, alternating between hot addresses
 * and the others so that neither kind can take all of it, and one address's failure ends only its visit.
 */
@Injectable()
export class Trc20Watcher {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly addresses: DepositAddressesRepository,
    private readonly deposits: ChainDepositsRepository,
    private readonly crediting: DepositCrediting,
    private readonly budget: TronGridBudget,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Deposits newly recorded, or null when TRC20 is off or another worker holds the lease. */
  async run(): Promise<number | null> {
    const tron = this.config.payments.chains.tron;
    if (!tron) {
      return null;
    }
    return withChainLease(this.dataSource, 'TRC20', async () => {
      const reader = { client: new TronGridClient(tron, this.budget.forRun()), events: new Map() };
      const { hot, cold } = await this.addresses.due(tron.coldPollEveryMs, this.budget.perRun());
      let recorded = 0;
      let failed = 0;
      for (const address of alternate(hot, cold)) {
        try {
          recorded += await this.visit(reader, tron, address);
        } catch (error) {
          if (error instanceof BudgetSpent) {
            break;
          }
          if (!(error instanceof ChainUnavailable)) {
            throw error;
          }
          failed++;
          metrics.chainWatchAddressFailures.inc({ network: 'TRC20' });
          this.logger.warn(
            { network: 'TRC20', address: address.address, err: error.message },
            'chain watch: address failed',
          );
        }
      }
      if (failed === 0) {
        metrics.chainWatchLastSuccess.set({ network: 'TRC20' }, Date.now() / 1000);
      }
      metrics.chainWatchLagSeconds.set({ network: 'TRC20' }, await this.addresses.lagSeconds());
      return recorded;
    });
  }

  /**
   * Reads the address's listing, then the events of each transaction that paid it and is not recorded
   * yet. Whatever stops the visit (a failure, the budget) stops it before the block it happened in: the
   * blocks before are credited and the cursor moves to them; that block is read again next time.
   */
  private async visit(reader: RunReader, tron: TronConfig, address: DepositAddressEntity): Promise<number> {
    const read: TronTransfer[] = [];
    let fingerprint: string | null = null;
    let complete = false;
    let stop: Error | null = null;
    try {
      for (let page = 0; page < PAGES_PER_ADDRESS && !complete; page++) {
        const answer = await reader.client.page(address.address, address.cursorMs ?? 0n, fingerprint);
        read.push(...answer.transfers);
        fingerprint = answer.fingerprint;
        complete = fingerprint === null;
      }
    } catch (error) {
      stop = stopping(error);
    }
    if (stop instanceof BudgetSpent && read.length === 0) {
      // Not a call made: the address was not visited, and keeps its place for the next run.
      throw stop;
    }
    // A listing cut short may end inside a block: that block waits for the next visit, which starts
    // at it (min_timestamp is inclusive), so a block's transactions are always taken together.
    let until = complete ? Infinity : Math.max(-1, ...read.map((transfer) => transfer.blockTimestamp));
    const deposits: (ChainTransfer & { blockTimestamp: number })[] = [];
    const paying = this.payingTransactions(tron, address, read);
    const recorded = await this.deposits.recordedTransactions(address.address, [...paying.keys()]);
    for (const [txid, blockTimestamp] of paying) {
      if (blockTimestamp >= until || recorded.has(txid)) {
        continue;
      }
      try {
        const found = this.transfersTo(tron, address, await this.eventsOf(reader, txid));
        if (found.length === 0) {
          throw new ChainUnavailable(`TronGrid lists a transfer of ${txid} to the address that its events do not show`);
        }
        deposits.push(...found.map((transfer) => ({ ...transfer, blockTimestamp })));
      } catch (error) {
        stop ??= stopping(error);
        until = Math.min(until, blockTimestamp);
        break;
      }
    }
    const done = read.filter((transfer) => transfer.blockTimestamp < until);
    const cursor = Math.max(-1, ...done.map((transfer) => transfer.blockTimestamp));
    const credited = await this.commit(
      address,
      deposits.filter((deposit) => deposit.blockTimestamp < until),
      cursor < 0 ? null : BigInt(cursor),
      stop === null && complete,
    );
    if (stop) {
      throw stop;
    }
    return credited;
  }

  /**
   * The transactions the listing shows paying the address in USDT, with their block's time, oldest
   * first. Another token, even one calling itself USDT, or another recipient, is not looked into.
   */
  private payingTransactions(tron: TronConfig, address: DepositAddressEntity, read: TronTransfer[]) {
    const paying = new Map<string, number>();
    for (const transfer of read) {
      const usdt =
        transfer.tokenAddress === tron.contract && transfer.decimals === USDT_DECIMALS && transfer.type === 'Transfer';
      if (usdt && transfer.to === address.address && transfer.value > 0n && !paying.has(transfer.txid)) {
        paying.set(transfer.txid, transfer.blockTimestamp);
      }
    }
    return paying;
  }

  private async eventsOf(reader: RunReader, txid: string): Promise<TronEvent[]> {
    const known = reader.events.get(txid);
    if (known) {
      return known;
    }
    const events = await reader.client.events(txid);
    reader.events.set(txid, events);
    return events;
  }

  /** The USDT Transfer events to the address, each one deposit by its own index. */
  private transfersTo(tron: TronConfig, address: DepositAddressEntity, events: TronEvent[]): ChainTransfer[] {
    return events
      .filter(
        (event) =>
          event.contract === tron.contract &&
          event.name === 'Transfer' &&
          event.to === address.address &&
          event.value !== null &&
          event.value > 0n,
      )
      .map((event) => ({
        network: 'TRC20',
        txid: event.txid,
        eventIndex: event.eventIndex,
        address: address.address,
        amount: event.value!,
        blockNumber: event.blockNumber,
      }));
  }

  /** Credits the transfers and moves the cursor in one transaction; then announces the credits. */
  private async commit(
    address: DepositAddressEntity,
    transfers: ChainTransfer[],
    cursorMs: bigint | null,
    polled: boolean,
  ): Promise<number> {
    const results = await this.dataSource.transaction(async (manager) => {
      const done: DepositResult[] = [];
      for (const transfer of transfers) {
        done.push(await this.crediting.record(manager, transfer, address.accountId));
      }
      // polled_at moves only once the whole listing was read: a visit cut short is not a poll.
      await this.addresses.advance(manager, address.id, cursorMs, polled);
      return done;
    });
    await this.crediting.announce('TRC20', results);
    return results.filter((result) => result.outcome !== 'duplicate').length;
  }
}

/** What ends a visit early; anything else (the database) ends the run. */
function stopping(error: unknown): Error {
  if (error instanceof ChainUnavailable || error instanceof BudgetSpent) {
    return error;
  }
  throw error;
}

/** Hot, cold, hot, cold…, then the rest of the longer: each kind gets at least half of the visits. */
function* alternate<T>(hot: T[], cold: T[]): Generator<T> {
  for (let i = 0; i < Math.max(hot.length, cold.length); i++) {
    if (i < hot.length) {
      yield hot[i];
    }
    if (i < cold.length) {
      yield cold[i];
    }
  }
}
