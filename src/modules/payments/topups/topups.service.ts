import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { Cursor, decodeCursor, encodeCursor } from 'src/common/http/cursor';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { formatUsd } from 'src/common/money/money';
import { accountSlot } from 'src/common/redis/key-slots';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import {
  AdminTopupDto,
  AdminTopupPageDto,
  AdminTopupQueryDto,
  TopupCreateDto,
  TopupDto,
  TopupPageDto,
  TopupPageQueryDto,
} from 'src/modules/payments/dto/topup.dto';
import { UsdtOrders } from 'src/modules/payments/topups/usdt-orders';
import { PaymentJobs } from 'src/modules/payments/confirmation/payment-jobs';
import { PaymentProviders } from 'src/modules/payments/providers/payment-providers';
import { PaymentSettingsService } from 'src/modules/payments/settings/payment-settings.service';
import { delayUntilPoll } from 'src/modules/payments/confirmation/poll-schedule';
import { ProviderUnavailable } from 'src/modules/payments/providers/payment-provider';
import { paymentOrderOf } from 'src/modules/payments/orders/payment-order';
import { cnyRangeFor, creditForCny, parseRate } from 'src/common/money/topup-amounts';
import { formatAmount, parseAmount } from 'src/values/amounts';
import { TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';
import { NewTopupOrder, TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';
import { PaymentThrottle } from 'src/modules/payments/payment-throttle';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/**
 * Pending orders an account may have at once: each one costs a call to the wallet and a poll every few
 * minutes until it expires, so their number is bounded before any of that work is done.
 */
export const MAX_PENDING_PER_ACCOUNT = 5;

/**
 * Orders an account may create a minute, whatever becomes of them: the cap above does not hold while
 * the wallet fails (such orders expire at once), and every order costs a call to the wallet.
 */
const ORDERS_PER_MINUTE = 20;

const validSeq = (position: Cursor) => position.length === 1 && /^\d{1,19}$/.test(position[0]);

/** Top-up orders as customers and operators see them. */
@Injectable()
export class TopupsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly orders: TopupOrdersRepository,
    private readonly throttle: PaymentThrottle,
    private readonly settings: PaymentSettingsService,
    private readonly providers: PaymentProviders,
    private readonly jobs: PaymentJobs,
    private readonly usdt: UsdtOrders,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * A CNY order: the amount is checked, the operator's rate copied, the payment created at the wallet
   * and the poller scheduled. A USDT order shows the account's address instead (usdt-orders.ts).
   */
  async create(accountId: string, dto: TopupCreateDto): Promise<TopupDto> {
    if (dto.currency === 'USDT') {
      return this.createUsdt(accountId, dto);
    }
    if (dto.network !== undefined) {
      throw ApiError.invalid('network applies to USDT top-ups only.', 'network');
    }
    const amount = parseAmount(dto.amount, 'CNY');
    if (amount === null) {
      throw ApiError.invalid(
        'amount must be a positive decimal string in CNY with at most 2 decimals, such as "100" or "99.50".',
        'amount',
      );
    }
    const provider = this.providers.get(dto.method ?? null);
    if (!dto.method || !provider) {
      throw ApiError.invalid(
        dto.method
          ? `${dto.method} is not configured on this gateway.`
          : 'method is required for CNY: alipay or wechatpay.',
        'method',
      );
    }
    const settings = await this.settings.current();
    const rate = settings.cnyPerUsd === null ? null : parseRate(settings.cnyPerUsd);
    if (rate === null) {
      throw ApiError.invalid('CNY top-ups are not available yet: no exchange rate is configured.', 'currency');
    }
    const credit = creditForCny(amount, rate);
    if (credit < settings.minTopupUsd || credit > settings.maxTopupUsd) {
      // The customer typed CNY, so the bounds are told in CNY first.
      const range = cnyRangeFor(settings.minTopupUsd, settings.maxTopupUsd, rate);
      throw ApiError.invalid(
        `amount must be from ${formatAmount(range.min, 'CNY')} to ${formatAmount(range.max, 'CNY')} CNY ` +
          `(${formatUsd(settings.minTopupUsd)} to ${formatUsd(settings.maxTopupUsd)} USD at ${settings.cnyPerUsd} CNY per USD).`,
        'amount',
      );
    }
    // One clock for both, so the order shows exactly the operator's TTL between them.
    const createdAt = new Date();
    await this.throttle.admit([{ key: `${accountSlot(accountId)}:topup`, limit: ORDERS_PER_MINUTE }], 'top-up orders');
    const order = await this.createWithinCap({
      accountId,
      currency: 'CNY',
      method: dto.method,
      network: null,
      amount,
      credit,
      rate: settings.cnyPerUsd,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + settings.orderTtlMinutes * 60_000),
    });
    metrics.topups.inc({ method: dto.method, status: 'pending' });
    // The poller asks the wallet about the order whatever it answers now: a payment created after all
    // (an answer lost on the way back) is then still found.
    await this.schedulePolling(order);
    try {
      order.instructions = { ...(await provider.createPayment(paymentOrderOf(order))) };
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) {
        throw error;
      }
      this.logger.warn(
        { orderId: order.id, method: dto.method, err: error.message },
        'the wallet did not create a payment',
      );
      // The payer never saw a code to pay, so the order expires at once rather than wait in the
      // customer's list (and count against the pending ones) for its whole lifetime.
      if (await this.orders.markExpired(order.id, false)) {
        metrics.topups.inc({ method: dto.method, status: 'expired' });
      }
      throw new ApiError(
        ErrorKind.UpstreamUnreachable,
        `${dto.method} did not answer; no payment was created. Try again in a moment.`,
      );
    }
    await this.orders.setInstructions(order.id, order.instructions);
    return TopupDto.from(order);
  }

  /** No wallet to call and nothing to poll: the chain's watcher credits the transfer whenever it comes. */
  private async createUsdt(accountId: string, dto: TopupCreateDto): Promise<TopupDto> {
    const plan = await this.usdt.plan(accountId, dto, await this.settings.current());
    await this.throttle.admit([{ key: `${accountSlot(accountId)}:topup`, limit: ORDERS_PER_MINUTE }], 'top-up orders');
    const order = await this.createWithinCap(plan.order);
    order.instructions = { ...plan.instructions };
    await this.orders.setInstructions(order.id, order.instructions);
    metrics.topups.inc({ method: plan.order.network!, status: 'pending' });
    return TopupDto.from(order);
  }

  async get(accountId: string, orderId: string): Promise<TopupDto> {
    const order = await this.orders.findById(orderId);
    // Another account's order is as unknown as a missing one.
    if (!order || order.accountId !== accountId) {
      throw new ApiError(ErrorKind.NotFound, `No top-up with id '${orderId}'.`, 'topupId');
    }
    return TopupDto.from(order);
  }

  async list(accountId: string, query: TopupPageQueryDto): Promise<TopupPageDto> {
    return this.page({ accountId }, query, (order) => TopupDto.from(order));
  }

  async adminList(query: AdminTopupQueryDto): Promise<AdminTopupPageDto> {
    return this.page({ accountId: query.accountId, status: query.status }, query, (order) =>
      AdminTopupDto.fromOrder(order),
    );
  }

  /** An operator asks the provider now (in the worker, like every confirmation) and sees the result. */
  async recheck(orderId: string): Promise<AdminTopupDto> {
    if (!(await this.orders.findById(orderId))) {
      throw new ApiError(ErrorKind.NotFound, `No top-up with id '${orderId}'.`, 'topupId');
    }
    await this.jobs.recheckAndWait(orderId);
    return AdminTopupDto.fromOrder((await this.orders.findById(orderId))!);
  }

  private async page<Item>(
    filter: { accountId?: string; status?: TopupOrderEntity['status'] },
    query: TopupPageQueryDto,
    map: (order: TopupOrderEntity) => Item,
  ): Promise<{ data: Item[]; nextCursor: string | null }> {
    const cursor = decodeCursor(query.cursor, validSeq);
    const rows = await this.orders.list({ ...filter, beforeSeq: cursor?.[0] ?? null, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const more = rows.length > query.limit;
    return { data: page.map(map), nextCursor: more ? encodeCursor([page[page.length - 1].seq]) : null };
  }

  /** Counts and inserts under a per-account lock, so that concurrent creations cannot overrun the cap. */
  private createWithinCap(order: NewTopupOrder): Promise<TopupOrderEntity> {
    return this.dataSource.transaction(async (manager) => {
      await this.orders.lockAccountOrders(manager, order.accountId);
      if ((await this.orders.countPending(order.accountId, manager)) >= MAX_PENDING_PER_ACCOUNT) {
        throw new ApiError(
          ErrorKind.RateLimited,
          `At most ${MAX_PENDING_PER_ACCOUNT} top-ups may wait for payment at once; pay one or let it expire.`,
        );
      }
      return this.orders.create(order, manager);
    });
  }

  private async schedulePolling(order: TopupOrderEntity): Promise<void> {
    const delay = delayUntilPoll(0, this.config.payments.pollDelaysMs, order.createdAt, order.expiresAt!, Date.now());
    // Without Redis the order still stands: the worker's sweep of overdue orders asks about it after its expiry.
    await this.jobs.schedulePoll(order.id, 0, delay).catch((error: Error) => {
      this.logger.warn({ orderId: order.id, err: error.message }, 'could not schedule the polling of an order');
    });
  }
}
