import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { ChainDepositEntity, DepositStatus } from 'src/modules/payments/chain/chain-deposit.entity';
import { TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';
import { ChainTransfer, UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { EntityManager, In, IsNull, Repository } from 'typeorm';

export interface DepositFilter {
  network?: UsdtNetwork;
  status?: DepositStatus;
  beforeSeq?: string | null;
  limit: number;
}

@Injectable()
export class ChainDepositsRepository {
  constructor(@InjectRepository(ChainDepositEntity) private readonly deposits: Repository<ChainDepositEntity>) {}

  /**
   * Records the transfer in the caller's transaction, below the minimum until its crediting says
   * otherwise; null when its reference (network, txid, event index, by the chain's numbering) is
   * already recorded, by this run or another: the one guard against crediting it twice.
   */
  async insert(
    manager: EntityManager,
    transfer: ChainTransfer,
    accountId: string,
    final: boolean,
  ): Promise<string | null> {
    const rows = await manager.query<{ id: string }[]>(
      `INSERT INTO chain_deposits
         (network, txid, event_index, address, account_id, amount, block_number, block_hash, finalized_at, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $9::boolean THEN now() END, 'below_minimum')
       ON CONFLICT (network, txid, event_index, numbering) DO NOTHING
       RETURNING id`,
      [
        transfer.network,
        transfer.txid,
        transfer.eventIndex,
        transfer.address,
        accountId,
        transfer.amount.toString(),
        transfer.blockNumber?.toString() ?? null,
        transfer.blockHash ?? null,
        final,
      ],
    );
    return rows[0]?.id ?? null;
  }

  /** The address's deposits still below the minimum, oldest first, locked in the caller's transaction. */
  waitingAt(manager: EntityManager, network: UsdtNetwork, address: string): Promise<ChainDepositEntity[]> {
    return manager
      .createQueryBuilder(ChainDepositEntity, 'd')
      .setLock('pessimistic_write')
      .where("d.network = :network AND d.address = :address AND d.status = 'below_minimum'", { network, address })
      .orderBy('d.seq', 'ASC')
      .getMany();
  }

  async markCredited(manager: EntityManager, ids: string[], orderId: string): Promise<void> {
    await manager.update(ChainDepositEntity, { id: In(ids) }, { status: 'credited', orderId });
  }

  /** The network's deposits not yet final (credited or waiting), oldest first. */
  unfinalized(network: UsdtNetwork, limit: number): Promise<ChainDepositEntity[]> {
    return this.deposits.find({
      where: { network, finalizedAt: IsNull(), status: In(['credited', 'below_minimum']) },
      order: { seq: 'ASC' },
      take: limit,
    });
  }

  async markFinal(ids: string[]): Promise<void> {
    if (ids.length > 0) {
      await this.deposits.update({ id: In(ids) }, { finalizedAt: () => 'now()' });
    }
  }

  /** The transfer is in another block now (a reorg that included it again): that block is the one to watch. */
  async moveTo(id: string, blockNumber: bigint, blockHash: string): Promise<void> {
    await this.deposits.update({ id }, { blockNumber, blockHash });
  }

  /**
   * Gone from the chain: the deposit turns reorged (and is final: nothing more will come of it), its
   * order, if it paid one, is marked; false when it was no longer waiting to be checked.
   */
  async markReorged(manager: EntityManager, id: string): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(ChainDepositEntity)
      .set({ status: 'reorged', finalizedAt: () => 'now()' })
      .where("id = :id AND status IN ('credited', 'below_minimum') AND finalized_at IS NULL", { id })
      .returning(['orderId'])
      .execute();
    if ((result.affected ?? 0) === 0) {
      return false;
    }
    const orderId = (result.raw as { order_id: string | null }[])[0]?.order_id;
    if (orderId) {
      await manager.update(TopupOrderEntity, { id: orderId }, { reorgedAt: () => 'now()' });
    }
    return true;
  }

  /**
   * Of these TRC20 transactions, those with a deposit to the address already, by either numbering: a
   * transaction's transfers to one address are recorded together, so its events need no second read.
   */
  async recordedTransactions(address: string, txids: string[]): Promise<Set<string>> {
    if (txids.length === 0) {
      return new Set();
    }
    const rows = await this.deposits.query<{ txid: string }[]>(
      `SELECT DISTINCT txid FROM chain_deposits WHERE network = 'TRC20' AND address = $1 AND txid = ANY($2)`,
      [address, txids],
    );
    return new Set(rows.map((row) => row.txid));
  }

  /** Newest first. */
  list(filter: DepositFilter): Promise<ChainDepositEntity[]> {
    const query = this.deposits.createQueryBuilder('d').orderBy('d.seq', 'DESC').limit(filter.limit);
    if (filter.network) {
      query.andWhere('d.network = :network', { network: filter.network });
    }
    if (filter.status) {
      query.andWhere('d.status = :status', { status: filter.status });
    }
    if (filter.beforeSeq) {
      query.andWhere('d.seq < :beforeSeq', { beforeSeq: filter.beforeSeq });
    }
    return query.getMany();
  }
}
