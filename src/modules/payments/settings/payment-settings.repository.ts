import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { PaymentSettingsEntity } from 'src/modules/payments/settings/payment-settings.entity';
import { Repository } from 'typeorm';

/** The operator's payment settings: one row (id 1), absent until first set. */
@Injectable()
export class PaymentSettingsRepository {
  constructor(@InjectRepository(PaymentSettingsEntity) private readonly settings: Repository<PaymentSettingsEntity>) {}

  find(): Promise<PaymentSettingsEntity | null> {
    return this.settings.findOneBy({ id: 1 });
  }

  async replace(
    values: Pick<PaymentSettingsEntity, 'cnyPerUsd' | 'minTopupUsd' | 'maxTopupUsd' | 'orderTtlMinutes'>,
  ): Promise<void> {
    await this.settings.upsert({ id: 1, ...values }, ['id']);
  }
}
