import { Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { RateLimitResponseDto, RateLimitUpsertDto } from 'src/modules/rate-limits/dto/rate-limit.dto';
import { RateLimitsRepository } from 'src/modules/rate-limits/rate-limits.repository';

@Injectable()
export class RateLimitsService {
  constructor(
    private readonly repository: RateLimitsRepository,
    private readonly accounts: AccountsRepository,
    private readonly bus: InvalidationBus,
  ) {}

  async upsert(accountId: string, modelId: string, dto: RateLimitUpsertDto): Promise<RateLimitResponseDto> {
    await this.requireAccount(accountId);
    const row = await this.repository.upsert({ accountId, modelId, ...dto });
    await this.bus.publish(InvalidationTopic.RateLimits, accountId);
    return RateLimitResponseDto.from(row);
  }

  async list(accountId: string): Promise<RateLimitResponseDto[]> {
    await this.requireAccount(accountId);
    return (await this.repository.listForAccount(accountId)).map((row) => RateLimitResponseDto.from(row));
  }

  async delete(accountId: string, modelId: string): Promise<void> {
    if (!(await this.repository.delete(accountId, modelId))) {
      throw new ApiError(
        ErrorKind.NotFound,
        `No rate-limit override for account '${accountId}' on '${modelId}'.`,
        'modelId',
      );
    }
    await this.bus.publish(InvalidationTopic.RateLimits, accountId);
  }

  private async requireAccount(accountId: string): Promise<void> {
    if (!(await this.accounts.findById(accountId))) {
      throw new ApiError(ErrorKind.NotFound, `No account with id '${accountId}'.`, 'accountId');
    }
  }
}
