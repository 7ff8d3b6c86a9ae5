import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { formatAmount } from 'src/values/amounts';
import { ChainDepositEntity } from 'src/modules/payments/chain/chain-deposit.entity';
import { ChainDepositsRepository } from 'src/modules/payments/chain/chain-deposits.repository';
import { Erc20Logs } from 'src/modules/payments/chain/erc20-logs';
import { DataSource } from 'typeorm';

/** Deposits looked at per run: more wait for the next run, oldest first. */
const DEPOSITS_PER_RUN = 500;

/**
 * ERC20 deposits recorded at `ERC20_CONFIRMATIONS` are looked at again at every run until their block
 * is finalized. One whose block was replaced and whose transfer the chain no longer has (a reorg
 * deeper than the depth) turns `reorged`, its order is marked, and the operator is told: the credit
 * is never taken back by itself, since only a person can tell a double spend from a transfer sent again.
 */
@Injectable()
export class Erc20Finality {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly deposits: ChainDepositsRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async check(chain: Erc20Logs): Promise<void> {
    const watched = (await this.deposits.unfinalized('ERC20', DEPOSITS_PER_RUN)).filter(
      (deposit) => deposit.blockNumber !== null && deposit.blockHash !== null,
    );
    if (watched.length === 0) {
      return;
    }
    // Read before the blocks: a block at or below it that still has our hash is final.
    const finalized = await chain.finalized();
    const hashes = await chain.hashesAt([...new Set(watched.map((deposit) => deposit.blockNumber!))]);
    const final: string[] = [];
    for (const deposit of watched) {
      const hash = hashes.get(deposit.blockNumber!);
      if (hash === deposit.blockHash) {
        if (deposit.blockNumber! <= finalized) {
          final.push(deposit.id);
        }
      } else if (hash !== undefined) {
        // Another block holds its height: the chain reorganized under it.
        await this.recheck(chain, deposit);
      }
      // No block at its height yet (the new branch is shorter so far): nothing to conclude.
    }
    await this.deposits.markFinal(final);
  }

  private async recheck(chain: Erc20Logs, deposit: ChainDepositEntity): Promise<void> {
    const now = await chain.transferNow(deposit.txid, deposit.address, deposit.amount);
    if (now) {
      // The new branch has the same transfer: the money is there; its new block is the one to watch.
      await this.deposits.moveTo(deposit.id, now.blockNumber, now.blockHash);
      this.logger.warn({ depositId: deposit.id, txid: deposit.txid }, 'a USDT transfer moved to another block');
      return;
    }
    const marked = await this.dataSource.transaction((manager) => this.deposits.markReorged(manager, deposit.id));
    if (!marked) {
      return;
    }
    metrics.depositReorged.inc({ network: 'ERC20' });
    const context = {
      depositId: deposit.id,
      orderId: deposit.orderId,
      accountId: deposit.accountId,
      txid: deposit.txid,
      amount: formatAmount(deposit.amount, 'USDT'),
    };
    if (deposit.status === 'credited') {
      this.logger.error(
        context,
        'a credited USDT transfer is gone from the chain (a reorg deeper than ERC20_CONFIRMATIONS): ' +
          'the credit stands until an operator reviews the top-up',
      );
    } else {
      this.logger.warn(context, 'a USDT transfer below the minimum is gone from the chain: it no longer adds up');
    }
  }
}
