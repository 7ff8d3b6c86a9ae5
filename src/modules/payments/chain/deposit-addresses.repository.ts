import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DepositAddressEntity } from 'src/modules/payments/chain/deposit-address.entity';
import { UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { EntityManager, Repository } from 'typeorm';

/**
 * A TRC20 address (as `a`) someone may be paying right now: its account has a pending USDT order on
 * the network, or a deposit to it was seen in the last hour (a payer often sends in parts). Reading
 * the address does not make it hot: anyone can read their own address as often as they like.
 */
const HOT = `(EXISTS (SELECT 1 FROM topup_orders o
                      WHERE o.account_id = a.account_id AND o.currency = 'USDT' AND o.network = a.network
                        AND o.status = 'pending')
          OR EXISTS (SELECT 1 FROM chain_deposits d
                     WHERE d.network = a.network AND d.address = a.address
                       AND d.created_at > now() - interval '1 hour'))`;

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

  listByAccount(accountId: string): Promise<DepositAddressEntity[]> {
    return this.addresses.find({ where: { accountId }, order: { network: 'ASC' } });
  }

  listByNetwork(network: UsdtNetwork): Promise<DepositAddressEntity[]> {
    return this.addresses.find({ where: { network }, order: { derivationIndex: 'ASC' } });
  }

  /**
   * TRC20 addresses due for a visit, least recently visited first, at most `limit` of each kind: hot
   * ones (see HOT) at every run, the others once their last visit is older than `coldEveryMs` or did
   * not finish.
   */
  async due(
    coldEveryMs: number,
    limit: number,
  ): Promise<{ hot: DepositAddressEntity[]; cold: DepositAddressEntity[] }> {
    const query = () =>
      this.addresses
        .createQueryBuilder('a')
        .where(`a.network = 'TRC20'`)
        .orderBy('a.visited_at', 'ASC', 'NULLS FIRST')
        .addOrderBy('a.derivation_index', 'ASC')
        .limit(limit);
    const hot = await query().andWhere(HOT).getMany();
    const cold = await query()
      .andWhere(`NOT ${HOT}`)
      // A visit that did not finish (TronGrid failed, or the budget ran out) is due again at once.
      .andWhere(
        `(a.visited_at IS NULL OR a.polled_at IS NULL OR a.polled_at < a.visited_at
          OR a.visited_at < now() - make_interval(secs => :coldSecs))`,
        { coldSecs: coldEveryMs / 1000 },
      )
      .getMany();
    return { hot, cold };
  }

  /**
   * TRC20, in the caller's transaction: the address was visited; its transfers up to `cursorMs` are
   * processed (when given), and, when `polled`, its whole listing was read.
   */
  async advance(manager: EntityManager, id: string, cursorMs: bigint | null, polled: boolean): Promise<void> {
    await manager.update(
      DepositAddressEntity,
      { id },
      {
        visitedAt: () => 'now()',
        ...(cursorMs !== null && { cursorMs }),
        ...(polled && { polledAt: () => 'now()' }),
      },
    );
  }

  /** TRC20: seconds since the least recently polled of the hot addresses was polled. */
  async lagSeconds(): Promise<number> {
    const [row] = await this.addresses.query<{ lag: number | null }[]>(
      `SELECT EXTRACT(EPOCH FROM now() - MIN(COALESCE(a.polled_at, a.created_at)))::float8 AS lag
       FROM deposit_addresses a WHERE a.network = 'TRC20' AND ${HOT}`,
    );
    return row?.lag ?? 0;
  }
}
