import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DepositAddressEntity } from 'src/modules/payments/chain/deposit-address.entity';
import { UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { EntityManager, Repository } from 'typeorm';

@Injectable()
export class DepositAddressesRepository {
  constructor(@InjectRepository(DepositAddressEntity) private readonly addresses: Repository<DepositAddressEntity>) {}

  /**
   * The account's address on the network, allocated on first use with the next unused index: under a
   * per-network lock, so concurrent first uses never take the same index, and rows are never deleted,
   * so an index once given is never given again.
   */
  async findOrAllocate(
    accountId: string,
    network: UsdtNetwork,
    derive: (index: number) => string,
  ): Promise<DepositAddressEntity> {
    const found = await this.addresses.findOneBy({ accountId, network });
    if (found) {
      return found;
    }
    return this.addresses.manager.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`deposit-index:${network}`]);
      const again = await manager.findOneBy(DepositAddressEntity, { accountId, network });
      if (again) {
        return again;
      }
      const [{ next }] = await manager.query<{ next: number }[]>(
        'SELECT COALESCE(MAX(derivation_index) + 1, 0)::int AS next FROM deposit_addresses WHERE network = $1',
        [network],
      );
      const row = manager.create(DepositAddressEntity, {
        accountId,
        network,
        derivationIndex: next,
        address: derive(next),
      });
      return manager.save(row);
    });
  }

  /** The account asked about its address now: its watcher polls it often for a while. */
  async touch(id: string): Promise<void> {
    await this.addresses.update({ id }, { requestedAt: () => 'now()' });
  }

  listByAccount(accountId: string): Promise<DepositAddressEntity[]> {
    return this.addresses.find({ where: { accountId }, order: { network: 'ASC' } });
  }

  listByNetwork(network: UsdtNetwork): Promise<DepositAddressEntity[]> {
    return this.addresses.find({ where: { network }, order: { derivationIndex: 'ASC' } });
  }

  /**
   * TRC20 addresses due for a poll: hot ones (asked about since `hotSince`, or with a pending order)
   * every time, the others once their last poll is older than `coldEveryMs`. Least recently polled first.
   */
  due(network: UsdtNetwork, hotSince: Date, coldEveryMs: number, limit: number): Promise<DepositAddressEntity[]> {
    return this.addresses
      .createQueryBuilder('a')
      .where('a.network = :network', { network })
      .andWhere(
        `(a.requested_at >= :hotSince
          OR a.polled_at IS NULL
          OR a.polled_at < now() - make_interval(secs => :coldSecs)
          OR EXISTS (SELECT 1 FROM topup_orders o
                     WHERE o.account_id = a.account_id AND o.network = a.network AND o.status = 'pending'))`,
        { hotSince, coldSecs: coldEveryMs / 1000 },
      )
      .orderBy('a.polled_at', 'ASC', 'NULLS FIRST')
      .limit(limit)
      .getMany();
  }

  /**
   * TRC20: the address's transfers up to `cursorMs` are processed (when given), and, when `polled`, its
   * whole listing was read; in the caller's transaction.
   */
  async advance(manager: EntityManager, id: string, cursorMs: bigint | null, polled: boolean): Promise<void> {
    await manager.update(
      DepositAddressEntity,
      { id },
      {
        ...(cursorMs !== null && { cursorMs }),
        ...(polled && { polledAt: () => 'now()' }),
      },
    );
  }

  /** TRC20: seconds since the least recently polled of the addresses asked about since `hotSince` was polled. */
  async lagSeconds(network: UsdtNetwork, hotSince: Date): Promise<number> {
    const [row] = await this.addresses.query<{ lag: number | null }[]>(
      `SELECT EXTRACT(EPOCH FROM now() - MIN(COALESCE(polled_at, created_at)))::float8 AS lag
       FROM deposit_addresses WHERE network = $1 AND requested_at >= $2`,
      [network, hotSince],
    );
    return row?.lag ?? 0;
  }
}
