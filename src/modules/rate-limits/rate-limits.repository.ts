import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AccountRateLimitEntity } from 'src/modules/rate-limits/account-rate-limit.entity';
import { Repository } from 'typeorm';

export type RateLimitValues = Omit<AccountRateLimitEntity, 'updatedAt' | 'account'>;

@Injectable()
export class RateLimitsRepository {
  constructor(@InjectRepository(AccountRateLimitEntity) private readonly limits: Repository<AccountRateLimitEntity>) {}

  async upsert(values: RateLimitValues): Promise<AccountRateLimitEntity> {
    await this.limits.upsert(values, ['accountId', 'modelId']);
    return this.limits.findOneByOrFail({ accountId: values.accountId, modelId: values.modelId });
  }

  listForAccount(accountId: string): Promise<AccountRateLimitEntity[]> {
    return this.limits.find({ where: { accountId }, order: { modelId: 'ASC' } });
  }

  listAll(): Promise<AccountRateLimitEntity[]> {
    return this.limits.find();
  }

  async delete(accountId: string, modelId: string): Promise<boolean> {
    return ((await this.limits.delete({ accountId, modelId })).affected ?? 0) > 0;
  }
}
