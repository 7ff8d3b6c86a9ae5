import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import {
  ConfirmationRefused,
  PaymentConfirmation,
} from 'src/modules/payments/confirmation/payment-confirmation.service';
import { PaymentJobs } from 'src/modules/payments/confirmation/payment-jobs';
import { PaymentProviders } from 'src/modules/payments/providers/payment-providers';
import { delayUntilPoll } from 'src/modules/payments/confirmation/poll-schedule';
import { paymentOrderOf } from 'src/modules/payments/orders/payment-order';
import { ProviderUnavailable } from 'src/modules/payments/providers/payment-provider';
import { StoredEvidence, TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';
import { TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';

/** Pending orders past their expiry by more than this had their poll chain lost: the sweep picks them up. */
export const OVERDUE_GRACE_MS = 5 * 60_000;
const OVERDUE_BATCH = 500;

/**
 * The wallets' words (Alipay, WeChat Pay) for a trade that takes no payment and needs no close: one
 * they closed themselves, or one they never created (its creation failed). Wallets may refuse to close
 * either (WeChat Pay answers 404 for an order it does not know), which would keep the order pending.
 */
const NOTHING_TO_CLOSE = new Set(['TRADE_CLOSED', 'CLOSED', 'TRADE_NOT_EXIST', 'ORDER_NOT_EXIST']);
/** Of those, a trade the wallet closed: it takes no payment any more, so a late check need not ask again. */
const CLOSED_BY_WALLET = new Set(['TRADE_CLOSED', 'CLOSED']);

export type ReconcileVia = 'poller' | 'recheck' | 'sweep';

/**
 * Our own query of a pending order, so that a lost or refused notification never loses a payment:
 * at the poll schedule's times, at an operator's recheck, and once more at expiry, after which the
 * payment is closed at the provider and the order expires.
 */
@Injectable()
export class ReconciliationService {
  constructor(
    private readonly orders: TopupOrdersRepository,
    private readonly providers: PaymentProviders,
    private readonly confirmation: PaymentConfirmation,
    private readonly jobs: PaymentJobs,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async reconcile(orderId: string, attempt: number, via: ReconcileVia): Promise<string> {
    const order = await this.orders.findById(orderId);
    // Redemptions are paid when created; only wallet orders are ever pending at a provider.
    if (!order || order.status === 'paid' || order.method === 'redemption') {
      return order?.status ?? 'unknown';
    }
    if (order.network) {
      return this.expireIfDue(order);
    }
    const provider = this.providers.get(order.method);
    if (!provider) {
      this.logger.warn({ orderId, method: order.method }, 'cannot reconcile an order: its method is not configured');
      return 'unconfigured';
    }
    const expired = order.expiresAt !== null && Date.now() >= order.expiresAt.getTime();
    const request = paymentOrderOf(order);
    try {
      const state = await provider.query(request);
      if (state.state === 'paid') {
        return await this.credit(order, state.evidence, via);
      }
      if (expired && order.status === 'pending') {
        // closed_at records that the wallet confirmed the close; a trade with nothing to close has none.
        const closing = !NOTHING_TO_CLOSE.has(state.rawStatus);
        if (closing) {
          await provider.close(request);
        }
        if (await this.orders.markExpired(order.id, closing)) {
          metrics.topups.inc({ method: provider.method, status: 'expired' });
        }
        return 'expired';
      }
      if (order.status === 'expired' && CLOSED_BY_WALLET.has(state.rawStatus)) {
        await this.orders.markClosed(order.id);
      }
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) {
        throw error;
      }
      this.logger.warn(
        { orderId, method: provider.method, err: error.message },
        'could not ask the provider about an order',
      );
    }
    if (via === 'poller' && order.status === 'pending') {
      await this.scheduleNext(order, attempt, expired);
    }
    return order.status;
  }

  private async credit(order: TopupOrderEntity, evidence: StoredEvidence, via: ReconcileVia): Promise<string> {
    try {
      await this.confirmation.confirm(order.id, evidence, via === 'sweep' ? 'poller' : via);
      return 'paid';
    } catch (error) {
      if (!(error instanceof ConfirmationRefused)) {
        throw error;
      }
      // The provider says paid, but not this order's amount: money arrived that no rule credits. An
      // operator settles it by hand; asking again would only say the same.
      this.logger.error(
        { orderId: order.id, reason: error.reason },
        'the provider reports a payment that cannot pay its order',
      );
      return 'refused';
    }
  }

  /**
   * A USDT order has no provider to ask: its watcher credits the transfer whenever it comes (a late one
   * as a top-up of its own), so at expiry the order only stops waiting.
   */
  private async expireIfDue(order: TopupOrderEntity): Promise<string> {
    const due = order.status === 'pending' && order.expiresAt !== null && Date.now() >= order.expiresAt.getTime();
    if (due && (await this.orders.markExpired(order.id, false))) {
      metrics.topups.inc({ method: order.network!, status: 'expired' });
      return 'expired';
    }
    return order.status;
  }

  /**
   * Pending orders long past expiry get their last query again (a lost job, a long outage of the
   * provider); expired orders their wallet did not confirm closed are queried again for
   * ORDER_LATE_PAYMENT_HOURS, should the payer have paid after our expiry and the notification been lost.
   * Either query credits a payment it finds through the one confirmation (expired → paid).
   */
  async sweepOverdue(): Promise<number> {
    const { latePaymentHours, pollDelaysMs } = this.config.payments;
    const overdue = await this.orders.overdue(OVERDUE_GRACE_MS, OVERDUE_BATCH);
    const late =
      latePaymentHours > 0
        ? await this.orders.lateDue(latePaymentHours, pollDelaysMs[pollDelaysMs.length - 1], OVERDUE_BATCH)
        : [];
    const orderIds = [...overdue, ...late];
    await Promise.all(orderIds.map((orderId) => this.jobs.scheduleOverdue(orderId)));
    return orderIds.length;
  }

  private async scheduleNext(order: TopupOrderEntity, attempt: number, expired: boolean): Promise<void> {
    const delays = this.config.payments.pollDelaysMs;
    // Past expiry the provider did not answer: ask again at the schedule's longest interval.
    const delay = expired
      ? delays[delays.length - 1]
      : delayUntilPoll(attempt + 1, delays, order.createdAt, order.expiresAt ?? new Date(), Date.now());
    await this.jobs.schedulePoll(order.id, attempt + 1, delay);
  }
}
