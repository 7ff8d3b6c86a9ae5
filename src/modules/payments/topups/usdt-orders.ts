import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from 'src/common/errors/api-error';
import { formatUsd } from 'src/common/money/money';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { DepositAddressesService } from 'src/modules/payments/chain/deposit-addresses.service';
import { UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { TopupCreateDto } from 'src/modules/payments/dto/topup.dto';
import { PaymentSettings } from 'src/modules/payments/settings/payment-settings.service';
import { creditForUsdt } from 'src/common/money/topup-amounts';
import { formatAmount, parseAmount } from 'src/values/amounts';
import { NewTopupOrder } from 'src/modules/payments/orders/topup-orders.repository';

/**
 * What `confirmations` counts up to on an order shown while `ERC20_CONFIRMATIONS=finalized`: about
 * two epochs, when Ethereum usually finalizes a block. The watcher credits at finality, not at this count.
 */
const FINALIZED_ESTIMATE = 64;

export interface UsdtOrderPlan {
  order: NewTopupOrder;
  instructions: { address: string; network: UsdtNetwork; confirmations: number; required: number; minimum: string };
}

/**
 * A USDT order is only a way to show the payer where to send: the transfer to the account's address
 * credits what it carries, whether or not an order waits for it.
 */
@Injectable()
export class UsdtOrders {
  constructor(
    private readonly addresses: DepositAddressesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async plan(accountId: string, dto: TopupCreateDto, settings: PaymentSettings): Promise<UsdtOrderPlan> {
    if (dto.method !== undefined) {
      throw ApiError.invalid('method applies to CNY top-ups only; USDT takes network.', 'method');
    }
    const network = dto.network;
    if (!network || !this.addresses.enabledNetworks().includes(network)) {
      throw ApiError.invalid(
        network ? `${network} is not configured on this gateway.` : 'network is required for USDT: TRC20 or ERC20.',
        'network',
      );
    }
    const amount = parseAmount(dto.amount, 'USDT');
    if (amount === null) {
      throw ApiError.invalid('amount must be a positive decimal string in USDT with at most 6 decimals.', 'amount');
    }
    const credit = creditForUsdt(amount);
    if (credit < settings.minTopupUsd || credit > settings.maxTopupUsd) {
      throw ApiError.invalid(
        `amount must be from ${formatUsd(settings.minTopupUsd)} to ${formatUsd(settings.maxTopupUsd)} USDT.`,
        'amount',
      );
    }
    const address = await this.addresses.addressFor(accountId, network);
    const createdAt = new Date();
    return {
      order: {
        accountId,
        currency: 'USDT',
        method: null,
        network,
        amount,
        credit,
        rate: null,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + settings.orderTtlMinutes * 60_000),
      },
      instructions: {
        address: address.address,
        network,
        confirmations: 0,
        required: this.required(network),
        minimum: formatAmount(this.config.payments.chains.minDeposit, 'USDT'),
      },
    };
  }

  /** TronGrid lists only solidified transfers, so one sighting is final there. */
  private required(network: UsdtNetwork): number {
    const depth = this.config.payments.chains.erc20?.confirmations;
    return network === 'TRC20' ? 1 : depth === 'finalized' ? FINALIZED_ESTIMATE : (depth ?? FINALIZED_ESTIMATE);
  }
}
