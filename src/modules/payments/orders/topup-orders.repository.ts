import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import {
  ConfirmedVia,
  StoredEvidence,
  TopupOrderEntity,
  TopupStatus,
} from 'src/modules/payments/orders/topup-order.entity';
import { EntityManager, Repository } from 'typeorm';

export type NewTopupOrder = Pick<
  TopupOrderEntity,
  'accountId' | 'currency' | 'method' | 'network' | 'amount' | 'credit' | 'rate' | 'expiresAt'
> &
  // The database's clock unless given: an order that expires sets both from one clock.
  Partial<Pick<TopupOrderEntity, 'createdAt'>>;

export interface TopupFilter {
  accountId?: string;
  status?: TopupStatus;
  /** Rows created before this seq (the cursor). */
  beforeSeq?: string | null;
  limit: number;
}

@Injectable()
export class TopupOrdersRepository {
  constructor(@InjectRepository(TopupOrderEntity) private readonly orders: Repository<TopupOrderEntity>) {}

  async create(order: NewTopupOrder, manager?: EntityManager): Promise<TopupOrderEntity> {
    const repository = manager ? manager.getRepository(TopupOrderEntity) : this.orders;
    return repository.save(repository.create({ ...order, status: 'pending' }));
  }

  /**
   * An account's orders still waiting for their payment. One past its expiry is not: whatever keeps it
   * pending (a wallet down at its expiry, a method since unconfigured) is not the customer's to wait out.
   */
  async countPending(accountId: string, manager: EntityManager = this.orders.manager): Promise<number> {
    const [row] = await manager.query<{ count: string }[]>(
      `SELECT COUNT(*) AS count FROM topup_orders WHERE account_id = $1 AND status = 'pending' AND expires_at > now()`,
      [accountId],
    );
    return Number(row.count);
  }

  findById(id: string, manager: EntityManager = this.orders.manager): Promise<TopupOrderEntity | null> {
    return manager.findOneBy(TopupOrderEntity, { id });
  }

  /**
   * Holds the account's order lock until the caller's transaction ends, so that concurrent creations
   * count the pending orders one after the other.
   */
  async lockAccountOrders(manager: EntityManager, accountId: string): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`topup:${accountId}`]);
  }

  /**
   * Marks the account's first paid top-up (once): a referral waits for it (accounts/referral-effective.ts).
   * Written with the credit, in the confirmation's transaction.
   */
  async markFirstPaidTopup(manager: EntityManager, accountId: string): Promise<void> {
    await manager.query(
      'UPDATE accounts SET first_paid_topup_at = now() WHERE id = $1 AND first_paid_topup_at IS NULL',
      [accountId],
    );
  }

  /** Newest first. */
  list(filter: TopupFilter): Promise<TopupOrderEntity[]> {
    const query = this.orders.createQueryBuilder('o').orderBy('o.seq', 'DESC').limit(filter.limit);
    if (filter.accountId) {
      query.andWhere('o.account_id = :accountId', { accountId: filter.accountId });
    }
    if (filter.status) {
      query.andWhere('o.status = :status', { status: filter.status });
    }
    if (filter.beforeSeq) {
      query.andWhere('o.seq < :beforeSeq', { beforeSeq: filter.beforeSeq });
    }
    return query.getMany();
  }

  async setInstructions(id: string, instructions: Record<string, unknown>): Promise<void> {
    await this.orders.query('UPDATE topup_orders SET instructions = $2::jsonb WHERE id = $1', [
      id,
      JSON.stringify(instructions),
    ]);
  }

  /**
   * pending → paid, or expired → paid (a late payment is still credited), in the caller's transaction.
   * False when the order is already paid (or does not exist): the conditional update makes a repeat a no-op.
   */
  async markPaid(manager: EntityManager, id: string, evidence: StoredEvidence, via: ConfirmedVia): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(TopupOrderEntity)
      .set({ status: 'paid', paidAt: () => 'now()', evidence, providerTradeNo: evidence.tradeNo, confirmedVia: via })
      .where('id = :id AND status IN (:...from)', { id, from: ['pending', 'expired'] })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /**
   * The account's oldest pending USDT order on the network, locked in the caller's transaction: what a
   * deposit pays. Null when there is none.
   */
  async oldestPendingUsdt(
    manager: EntityManager,
    accountId: string,
    network: string,
  ): Promise<TopupOrderEntity | null> {
    return manager
      .createQueryBuilder(TopupOrderEntity, 'o')
      .setLock('pessimistic_write')
      .where("o.account_id = :accountId AND o.network = :network AND o.currency = 'USDT' AND o.status = 'pending'", {
        accountId,
        network,
      })
      .orderBy('o.seq', 'ASC')
      .limit(1)
      .getOne();
  }

  /**
   * A pending USDT order takes the amount a transfer carried (the order only showed the way to pay; the
   * transfer credits what it carries), in the caller's transaction, before it is confirmed.
   */
  async setCarriedAmount(manager: EntityManager, id: string, amount: bigint, credit: bigint): Promise<void> {
    await manager.update(TopupOrderEntity, { id, status: 'pending' }, { amount, credit });
  }

  /** The instructions of the account's pending USDT orders on the network show `confirmations` so far. */
  async setConfirmations(accountId: string, network: string, confirmations: number): Promise<void> {
    await this.orders.query(
      `UPDATE topup_orders SET instructions = jsonb_set(instructions, '{confirmations}', to_jsonb($3::int))
       WHERE account_id = $1 AND network = $2 AND status = 'pending' AND instructions IS NOT NULL`,
      [accountId, network, confirmations],
    );
  }

  /** pending → expired, once the provider closed the payment (or never created it); false when it was no longer pending. */
  async markExpired(id: string, closed: boolean): Promise<boolean> {
    const result = await this.orders
      .createQueryBuilder()
      .update(TopupOrderEntity)
      .set(closed ? { status: 'expired', closedAt: () => 'now()' } : { status: 'expired' })
      .where("id = :id AND status = 'pending'", { id })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** An expired order's wallet says it closed the trade: no late payment can come, so no late check asks again. */
  async markClosed(id: string): Promise<void> {
    await this.orders.query(
      `UPDATE topup_orders SET closed_at = now() WHERE id = $1 AND status = 'expired' AND closed_at IS NULL`,
      [id],
    );
  }

  /** Pending orders whose expiry passed more than `graceMs` ago: their reconciliation was lost. */
  async overdue(graceMs: number, limit: number): Promise<string[]> {
    const rows = await this.orders.query<{ id: string }[]>(
      `SELECT id FROM topup_orders WHERE status = 'pending' AND expires_at < now() - make_interval(secs => $1)
       ORDER BY expires_at LIMIT $2`,
      [graceMs / 1000, limit],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Expired wallet orders, not confirmed closed at their wallet, whose expiry is less than `windowHours`
   * old and whose next late check is due; each is marked checked now, by the statement that picks it.
   * A check falls due half the order's age at its last check after it (asked at 1, 2, 3, 4.5 … minutes
   * past expiry), never sooner than `minIntervalMs` and at least hourly: a payer who pays a while
   * after expiry is found within about a third of that while, at a few dozen queries per order per day.
   */
  async lateDue(windowHours: number, minIntervalMs: number, limit: number): Promise<string[]> {
    // An UPDATE answers [rows, count] through TypeORM.
    const [rows] = await this.orders.query<[{ id: string }[], number]>(
      `UPDATE topup_orders SET late_checked_at = now()
       WHERE id IN (
         SELECT id FROM topup_orders
         WHERE status = 'expired' AND closed_at IS NULL AND method IN ('alipay', 'wechatpay')
           AND expires_at > now() - make_interval(hours => $1)
           AND (late_checked_at IS NULL OR now() >= late_checked_at + LEAST(interval '1 hour',
                GREATEST(make_interval(secs => $2), (late_checked_at - expires_at) / 2)))
         ORDER BY expires_at LIMIT $3
         FOR UPDATE SKIP LOCKED
       )
       RETURNING id`,
      [windowHours, minIntervalMs / 1000, limit],
    );
    return rows.map((row) => row.id);
  }
}
