import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { BalanceGateService, BalanceSnapshot } from 'src/modules/ledger/balance-gate.service';
import { LedgerEntryEntity } from 'src/modules/ledger/ledger-entry.entity';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';
import { parseAmount } from 'src/values/amounts';
import { ConfirmedVia, StoredEvidence, TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';
import { TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';
import { DataSource, EntityManager } from 'typeorm';

/** Evidence that cannot pay the order it names, however often it is tried: no credit, and no retry. */
export class ConfirmationRefused extends Error {
  constructor(readonly reason: 'unknown_order' | 'wrong_amount') {
    super(reason === 'unknown_order' ? 'no such order' : 'the amount paid is not the amount of the order');
  }
}

export type Confirmation =
  | { outcome: 'credited'; order: TopupOrderEntity; entry: LedgerEntryEntity; snapshot: BalanceSnapshot }
  | { outcome: 'already_paid'; order: TopupOrderEntity };

/**
 * The one way an order is paid, whatever brought the news (a wallet's notification, our own query, an
 * operator's recheck, a redemption code): in one transaction the order turns paid by a conditional
 * update and its `topup` ledger entry is written, referenced by the order. A repeat finds the order
 * paid and does nothing; a process that dies in between leaves neither.
 */
@Injectable()
export class PaymentConfirmation {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly orders: TopupOrdersRepository,
    private readonly ledger: LedgerRepository,
    private readonly gate: BalanceGateService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Confirms in its own transaction; or, given a manager, in the caller's, which must then call
   * `announce` once it committed. Throws ConfirmationRefused for evidence that can never pay the order.
   */
  async confirm(
    orderId: string,
    evidence: StoredEvidence,
    via: ConfirmedVia,
    manager?: EntityManager,
  ): Promise<Confirmation> {
    if (manager) {
      return this.confirmIn(manager, orderId, evidence, via);
    }
    const confirmation = await this.dataSource.transaction((transaction) =>
      this.confirmIn(transaction, orderId, evidence, via),
    );
    await this.announce(confirmation);
    return confirmation;
  }

  /**
   * After the commit: the new balance goes to Redis, so it is spendable at once (if Redis is away, the
   * worker's balance resync pushes it), and the metrics count it.
   */
  async announce(confirmation: Confirmation): Promise<void> {
    if (confirmation.outcome !== 'credited') {
      return;
    }
    const { order, snapshot } = confirmation;
    const via = order.confirmedVia ?? 'unknown';
    metrics.topups.inc({ method: order.method ?? order.network ?? 'none', status: 'paid' });
    metrics.paymentConfirmSeconds.observe({ via }, (Date.now() - order.createdAt.getTime()) / 1000);
    this.logger.info({ orderId: order.id, accountId: order.accountId, via }, 'top-up credited');
    if (order.expiresAt && order.paidAt && order.paidAt > order.expiresAt) {
      // Paid after its order expired (a late payer, a lost close): credited all the same, and said so.
      const lateSeconds = Math.round((order.paidAt.getTime() - order.expiresAt.getTime()) / 1000);
      this.logger.warn({ orderId: order.id, via, lateSeconds }, 'a payment made after its order expired was credited');
    }
    await this.gate.sync(order.accountId, snapshot).catch((error: Error) => {
      this.logger.warn(
        { accountId: order.accountId, err: error.message },
        'could not push a topped-up balance to Redis',
      );
    });
  }

  private async confirmIn(
    manager: EntityManager,
    orderId: string,
    evidence: StoredEvidence,
    via: ConfirmedVia,
  ): Promise<Confirmation> {
    const order = await this.orders.findById(orderId, manager);
    if (!order) {
      throw new ConfirmationRefused('unknown_order');
    }
    if (parseAmount(evidence.amount, order.currency) !== order.amount) {
      throw new ConfirmationRefused('wrong_amount');
    }
    if (!(await this.orders.markPaid(manager, orderId, evidence, via))) {
      return { outcome: 'already_paid', order };
    }
    const posted = await this.ledger.post(
      {
        accountId: order.accountId,
        kind: 'topup',
        amount: order.credit,
        reference: order.id,
        description: `top-up: ${order.method ?? order.currency}`,
      },
      manager,
    );
    if (posted.outcome !== 'applied') {
      // The order was unpaid, so no entry can exist for it: anything else is a broken invariant, and
      // throwing rolls the order back to what it was.
      throw new Error(`the top-up entry of order ${order.id} could not be written: ${posted.outcome}`);
    }
    // The first paid top-up of any kind (a wallet, USDT, a redemption code) is a signal a referral
    // waits for, as much as a verified e-mail (accounts/referral-effective.ts): it is recorded once.
    await this.orders.markFirstPaidTopup(manager, order.accountId);
    const paid = (await this.orders.findById(orderId, manager))!;
    return {
      outcome: 'credited',
      order: paid,
      entry: posted.entry,
      snapshot: { balance: posted.entry.balanceAfter, version: posted.version },
    };
  }
}
