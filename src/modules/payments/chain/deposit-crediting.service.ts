import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { metrics } from 'src/common/metrics/metrics';
import { ChainDepositsRepository } from 'src/modules/payments/chain/chain-deposits.repository';
import { ChainTransfer } from 'src/modules/payments/chain/usdt-network';
import { Confirmation, PaymentConfirmation } from 'src/modules/payments/payment-confirmation.service';
import { creditForUsdt, formatAmount } from 'src/common/money/topup-amounts';
import { TopupOrdersRepository } from 'src/modules/payments/topup-orders.repository';
import { EntityManager } from 'typeorm';

export type DepositOutcome = 'credited' | 'below_minimum' | 'duplicate';

export interface DepositResult {
  outcome: DepositOutcome;
  /** To announce once the caller's transaction committed. */
  confirmation: Confirmation | null;
}

/**
 * What a confirmed transfer to one of our addresses becomes, in the watcher's transaction (with its
 * cursor): recorded once by its reference, then, at or above the minimum, the payment of the account's
 * oldest pending USDT order on that network, or of a top-up of its own, through the one confirmation.
 */
@Injectable()
export class DepositCrediting {
  constructor(
    private readonly deposits: ChainDepositsRepository,
    private readonly orders: TopupOrdersRepository,
    private readonly confirmation: PaymentConfirmation,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async record(manager: EntityManager, transfer: ChainTransfer, accountId: string): Promise<DepositResult> {
    const credits = transfer.amount >= this.config.payments.chains.minDeposit;
    const depositId = await this.deposits.insert(manager, transfer, accountId, credits ? 'credited' : 'below_minimum');
    if (!depositId || !credits) {
      return { outcome: depositId ? 'below_minimum' : 'duplicate', confirmation: null };
    }
    const credit = creditForUsdt(transfer.amount);
    const pending = await this.orders.oldestPendingUsdt(manager, accountId, transfer.network);
    if (pending) {
      await this.orders.setCarriedAmount(manager, pending.id, transfer.amount, credit);
    }
    const orderId =
      pending?.id ??
      (
        await this.orders.create(
          {
            accountId,
            currency: 'USDT',
            method: null,
            network: transfer.network,
            amount: transfer.amount,
            credit,
            rate: null,
            expiresAt: null,
          },
          manager,
        )
      ).id;
    await this.deposits.setOrder(manager, depositId, orderId);
    const evidence = {
      provider: transfer.network,
      tradeNo: `${transfer.txid}:${transfer.eventIndex}`,
      amount: formatAmount(transfer.amount, 'USDT'),
      rawStatus: 'CONFIRMED',
    };
    const confirmation = await this.confirmation.confirm(orderId, evidence, 'chain', manager);
    return { outcome: 'credited', confirmation };
  }

  /** After the commit: the balances go to Redis, and the outcomes are counted. */
  async announce(network: string, results: DepositResult[]): Promise<void> {
    for (const result of results) {
      metrics.deposits.inc({ network, outcome: result.outcome });
      if (result.confirmation) {
        await this.confirmation.announce(result.confirmation);
      }
    }
  }
}
