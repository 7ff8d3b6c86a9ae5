import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { PaymentJobs } from 'src/modules/payments/confirmation/payment-jobs';
import { PaymentProviders } from 'src/modules/payments/providers/payment-providers';
import {
  NotificationRejected,
  PaymentProvider,
  RawNotification,
  VerifiedNotification,
  WebhookReply,
} from 'src/modules/payments/providers/payment-provider';
import { parseAmount } from 'src/values/amounts';
import { orderIdOf, TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';
import { TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';

/**
 * A wallet's notification: verified with the keys of the provider its path names, matched against the
 * order it names, and handed to the worker, which credits it. The wallet hears success only once the
 * credit is committed; anything else makes it resend, and the poller does not depend on it anyway.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly providers: PaymentProviders,
    private readonly orders: TopupOrdersRepository,
    private readonly jobs: PaymentJobs,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Undefined when the method is not configured here (the route then answers 404). */
  async receive(method: string, raw: RawNotification): Promise<WebhookReply | undefined> {
    const provider = this.providers.get(method);
    if (!provider) {
      return undefined;
    }
    try {
      return provider.reply(await this.handle(provider, raw));
    } catch (error) {
      if (error instanceof NotificationRejected) {
        metrics.paymentNotifyRejected.inc({ provider: provider.method, reason: error.reason });
        // The reason only: the body is the customer's payment, and a forged one is the attacker's text.
        this.logger.warn({ provider: provider.method, reason: error.reason }, 'payment notification rejected');
        return provider.reply('rejected');
      }
      this.logger.error(
        { provider: provider.method, err: (error as Error).message },
        'payment notification not processed',
      );
      return provider.reply('retry');
    }
  }

  private async handle(provider: PaymentProvider, raw: RawNotification): Promise<'committed' | 'retry'> {
    const notification = provider.verifyNotification(raw);
    const order = await this.orderOf(notification, provider);
    if (!notification.paid) {
      // A genuine notification of another state (waiting, closed): nothing to credit, nothing to resend.
      return 'committed';
    }
    if (order.status !== 'paid') {
      await this.jobs.confirmAndWait(order.id, notification.evidence);
    }
    const now = await this.orders.findById(order.id);
    if (now?.status !== 'paid') {
      return 'retry';
    }
    if (now.providerTradeNo !== notification.evidence.tradeNo) {
      // The order was paid by another trade: this one is a second payment of the same order. It is
      // acknowledged (resending changes nothing) and logged for an operator to refund.
      this.logger.error({ orderId: order.id, provider: provider.method }, 'a second payment for an order already paid');
    }
    return 'committed';
  }

  /** The order a verified notification names: ours, of this provider, for exactly this amount. */
  private async orderOf(notification: VerifiedNotification, provider: PaymentProvider): Promise<TopupOrderEntity> {
    const orderId = orderIdOf(notification.orderNo);
    const order = orderId ? await this.orders.findById(orderId) : null;
    if (!order) {
      throw new NotificationRejected('unknown_order');
    }
    if (order.method !== provider.method || order.currency !== 'CNY') {
      throw new NotificationRejected('wrong_order');
    }
    if (parseAmount(notification.evidence.amount, 'CNY') !== order.amount) {
      throw new NotificationRejected('wrong_amount');
    }
    return order;
  }
}
