import { Injectable } from '@nestjs/common';
import { NANOS_PER_USD } from 'src/common/money/money';
import { PaymentSettingsEntity } from 'src/modules/payments/settings/payment-settings.entity';
import { PaymentSettingsRepository } from 'src/modules/payments/settings/payment-settings.repository';

/** What applies until the operator sets otherwise: 1 to 10,000 USD per order, orders live 30 minutes, no CNY rate. */
const DEFAULTS = {
  cnyPerUsd: null,
  minTopupUsd: NANOS_PER_USD,
  maxTopupUsd: 10_000n * NANOS_PER_USD,
  orderTtlMinutes: 30,
};

export type PaymentSettings = Pick<
  PaymentSettingsEntity,
  'cnyPerUsd' | 'minTopupUsd' | 'maxTopupUsd' | 'orderTtlMinutes'
>;

@Injectable()
export class PaymentSettingsService {
  constructor(private readonly settings: PaymentSettingsRepository) {}

  /** Read per order: an order copies what applies when it is created, so a change applies at once everywhere. */
  async current(): Promise<PaymentSettings> {
    return (await this.settings.find()) ?? { ...DEFAULTS };
  }

  async replace(settings: PaymentSettings): Promise<PaymentSettings> {
    await this.settings.replace(settings);
    return this.current();
  }
}
