import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { ChainDepositEntity, DepositStatus } from 'src/modules/payments/chain/chain-deposit.entity';
import { ChainTransfer, UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { EntityManager, Repository } from 'typeorm';

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
   * Records the transfer in the caller's transaction; null when its reference (network, txid, event
   * index, by the chain's numbering) is already recorded, by this run or another: the one guard
   * against crediting it twice.
   */
  async insert(
    manager: EntityManager,
    transfer: ChainTransfer,
    accountId: string,
    status: DepositStatus,
  ): Promise<string | null> {
    const rows = await manager.query<{ id: string }[]>(
      `INSERT INTO chain_deposits (network, txid, event_index, address, account_id, amount, block_number, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
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
        status,
      ],
    );
    return rows[0]?.id ?? null;
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

  async setOrder(manager: EntityManager, id: string, orderId: string): Promise<void> {
    await manager.update(ChainDepositEntity, { id }, { orderId });
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
