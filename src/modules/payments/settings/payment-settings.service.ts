import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { NANOS_PER_USD } from 'src/common/money/money';
import { PaymentSettingsEntity } from 'src/modules/payments/settings/payment-settings.entity';
import { Repository } from 'typeorm';

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
  constructor(@InjectRepository(PaymentSettingsEntity) private readonly settings: Repository<PaymentSettingsEntity>) {}

  /** Read per order: an order copies what applies when it is created, so a change applies at once everywhere. */
  async current(): Promise<PaymentSettings> {
    return (await this.settings.findOneBy({ id: 1 })) ?? { ...DEFAULTS };
  }

  async replace(settings: PaymentSettings): Promise<PaymentSettings> {
    await this.settings.upsert({ id: 1, ...settings }, ['id']);
    return this.current();
  }
}
