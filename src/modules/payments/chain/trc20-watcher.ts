import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { withChainLease } from 'src/modules/payments/chain/chain-lease';
import { DepositAddressEntity } from 'src/modules/payments/chain/deposit-address.entity';
import { DepositAddressesRepository } from 'src/modules/payments/chain/deposit-addresses.repository';
import { DepositCrediting, DepositResult } from 'src/modules/payments/chain/deposit-crediting.service';
import { ChainUnavailable, TronGridClient, TronTransfer } from 'src/modules/payments/chain/trongrid-client';
import { ChainTransfer } from 'src/modules/payments/chain/usdt-network';
import { DataSource } from 'typeorm';

/** An address asked about within this long is polled at every run; the others only now and then. */
const HOT_FOR_MS = 24 * 3_600_000;
const ADDRESSES_PER_RUN = 100;
const PAGES_PER_ADDRESS = 10;
const USDT_DECIMALS = 6;

/**
 * The TRC20 watcher: each due address's confirmed USDT transfers since its cursor, read from TronGrid
 * and credited in one transaction with the cursor's advance, so a run that fails anywhere leaves the
 * cursor where the last commit put it, and a transfer read again is recorded once.
 */
@Injectable()
export class Trc20Watcher {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly addresses: DepositAddressesRepository,
    private readonly crediting: DepositCrediting,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Deposits newly recorded, or null when TRC20 is off or another worker holds the lease. */
  async run(): Promise<number | null> {
    const tron = this.config.payments.chains.tron;
    if (!tron) {
      return null;
    }
    const client = new TronGridClient(tron);
    return withChainLease(this.dataSource, 'TRC20', async () => {
      const hotSince = new Date(Date.now() - HOT_FOR_MS);
      const due = await this.addresses.due('TRC20', hotSince, tron.coldPollEveryMs, ADDRESSES_PER_RUN);
      let recorded = 0;
      for (const address of due) {
        recorded += await this.poll(client, address);
      }
      metrics.chainWatchLastSuccess.set({ network: 'TRC20' }, Date.now() / 1000);
      metrics.chainWatchLagSeconds.set({ network: 'TRC20' }, await this.addresses.lagSeconds('TRC20', hotSince));
      return recorded;
    });
  }

  private async poll(client: TronGridClient, address: DepositAddressEntity): Promise<number> {
    const start = address.cursorMs ?? 0n;
    const read: TronTransfer[] = [];
    let fingerprint: string | null = null;
    let complete = false;
    let failure: ChainUnavailable | null = null;
    try {
      for (let page = 0; page < PAGES_PER_ADDRESS && !complete; page++) {
        const answer = await client.page(address.address, start, fingerprint);
        read.push(...answer.transfers);
        fingerprint = answer.fingerprint;
        complete = fingerprint === null;
      }
    } catch (error) {
      if (!(error instanceof ChainUnavailable)) {
        throw error;
      }
      failure = error;
    }
    // A listing cut short may end inside a block: that block waits for the next run, which starts at it
    // (min_timestamp is inclusive), so a transaction's transfers are always numbered together.
    const last = read.reduce((max, transfer) => Math.max(max, transfer.blockTimestamp), -1);
    const processed = complete ? read : read.filter((transfer) => transfer.blockTimestamp < last);
    const cursor = processed.reduce((max, transfer) => Math.max(max, transfer.blockTimestamp), -1);
    const recorded = await this.commit(address, processed, cursor < 0 ? null : BigInt(cursor), complete);
    if (failure) {
      this.logger.warn({ network: 'TRC20', address: address.address, err: failure.message }, 'chain watch stopped');
      throw failure;
    }
    return recorded;
  }

  /** Credits the transfers and moves the cursor in one transaction; then announces the credits. */
  private async commit(
    address: DepositAddressEntity,
    transfers: TronTransfer[],
    cursorMs: bigint | null,
    complete: boolean,
  ): Promise<number> {
    const ours = this.depositsOf(address, transfers);
    const results = await this.dataSource.transaction(async (manager) => {
      const done: DepositResult[] = [];
      for (const transfer of ours) {
        done.push(await this.crediting.record(manager, transfer, address.accountId));
      }
      // polled_at moves only once the whole listing was read: a poll cut short is not a poll.
      if (cursorMs !== null || complete) {
        await this.addresses.advance(manager, address.id, cursorMs, complete);
      }
      return done;
    });
    await this.crediting.announce('TRC20', results);
    return results.filter((result) => result.outcome !== 'duplicate').length;
  }

  /**
   * USDT transfers to this address, numbered within their transaction (TronGrid's list names no event
   * index). An entry listed again (pages overlap where a block straddles them) is the same transfer, so
   * identical entries count once. Another token, even one calling itself USDT, or another recipient, is ignored.
   */
  private depositsOf(address: DepositAddressEntity, transfers: TronTransfer[]): ChainTransfer[] {
    const listed = new Set<string>();
    const seen = new Map<string, number>();
    const deposits: ChainTransfer[] = [];
    for (const transfer of transfers) {
      const identity = JSON.stringify([
        transfer.txid,
        transfer.from,
        transfer.to,
        transfer.value.toString(),
        transfer.tokenAddress,
      ]);
      if (listed.has(identity)) {
        continue;
      }
      listed.add(identity);
      const eventIndex = seen.get(transfer.txid) ?? 0;
      seen.set(transfer.txid, eventIndex + 1);
      const usdt =
        transfer.tokenAddress === this.config.payments.chains.tron!.contract &&
        transfer.decimals === USDT_DECIMALS &&
        transfer.type === 'Transfer';
      if (!usdt || transfer.to !== address.address || transfer.value <= 0n) {
        continue;
      }
      deposits.push({
        network: 'TRC20',
        txid: transfer.txid,
        eventIndex,
        address: address.address,
        amount: transfer.value,
        blockNumber: null,
      });
    }
    return deposits;
  }
}
