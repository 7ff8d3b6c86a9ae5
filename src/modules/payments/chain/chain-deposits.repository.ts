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
   * index) is already recorded, by this run or another: the one guard against crediting it twice.
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
       ON CONFLICT (network, txid, event_index) DO NOTHING
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
