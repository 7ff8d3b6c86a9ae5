import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { metrics } from 'src/common/metrics/metrics';
import { ChainDepositsRepository } from 'src/modules/payments/chain/chain-deposits.repository';
import { ChainTransfer } from 'src/modules/payments/chain/usdt-network';
import { Confirmation, PaymentConfirmation } from 'src/modules/payments/confirmation/payment-confirmation.service';
import { creditForUsdt } from 'src/common/money/topup-amounts';
import { formatAmount } from 'src/values/amounts';
import { TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';
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
 * Transfers below the minimum wait at their address and add up: the one that brings their sum to the
 * minimum credits the sum, once, and every one of them names that top-up.
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
    const depositId = await this.deposits.insert(manager, transfer, accountId, this.finalOnSight(transfer));
    if (!depositId) {
      return { outcome: 'duplicate', confirmation: null };
    }
    const minimum = this.config.payments.chains.minDeposit;
    let paying = [{ id: depositId, amount: transfer.amount }];
    if (transfer.amount < minimum) {
      paying = await this.deposits.waitingAt(manager, transfer.network, transfer.address);
      if (paying.reduce((sum, deposit) => sum + deposit.amount, 0n) < minimum) {
        return { outcome: 'below_minimum', confirmation: null };
      }
    }
    const amount = paying.reduce((sum, deposit) => sum + deposit.amount, 0n);
    const orderId = await this.orderFor(manager, transfer, accountId, amount);
    await this.deposits.markCredited(
      manager,
      paying.map((deposit) => deposit.id),
      orderId,
    );
    // The transfer that completed the sum stands for it: its reference is the order's trade number.
    const evidence = {
      provider: transfer.network,
      tradeNo: `${transfer.txid}:${transfer.eventIndex}`,
      amount: formatAmount(amount, 'USDT'),
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

  /** The account's oldest pending order on the network, taking the amount paid, or a top-up of its own. */
  private async orderFor(
    manager: EntityManager,
    transfer: ChainTransfer,
    accountId: string,
    amount: bigint,
  ): Promise<string> {
    const credit = creditForUsdt(amount);
    const pending = await this.orders.oldestPendingUsdt(manager, accountId, transfer.network);
    if (pending) {
      await this.orders.setCarriedAmount(manager, pending.id, amount, credit);
      return pending.id;
    }
    const order = { accountId, currency: 'USDT' as const, method: null, network: transfer.network, rate: null };
    return (await this.orders.create({ ...order, amount, credit, expiresAt: null }, manager)).id;
  }

  /** TronGrid lists only solidified transfers; an ERC20 watcher crediting at `finalized` reads only final blocks. */
  private finalOnSight(transfer: ChainTransfer): boolean {
    return transfer.network === 'TRC20' || this.config.payments.chains.erc20?.confirmations === 'finalized';
  }
}
