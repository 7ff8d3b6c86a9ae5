import { Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { DEFAULT_GROUP_ID } from 'src/modules/account-groups/account-group.entity';
import { AccountGroupsRepository } from 'src/modules/account-groups/account-groups.repository';
import { AccountGroupDto, AccountGroupUpsertDto } from 'src/modules/account-admin/dto/account-group.dto';
import { formatMultiplier, parseMultiplier } from 'src/common/money/price-multiplier';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';

/**
 * The operator's account groups. A group's terms are read with each key into every API process's key cache,
 * so a change of those terms drops the caches everywhere: each key's next request reads the new terms (one
 * query per key and process, as after a restart).
 */
@Injectable()
export class AccountGroupsAdminService {
  constructor(
    private readonly groups: AccountGroupsRepository,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly bus: InvalidationBus,
  ) {}

  async list(): Promise<AccountGroupDto[]> {
    return (await this.groups.listWithMembers()).map((group) => AccountGroupDto.from(group));
  }

  async get(id: string): Promise<AccountGroupDto> {
    const found = await this.groups.findWithMembers(id);
    if (!found) {
      throw notFound(id);
    }
    return AccountGroupDto.from(found);
  }

  async upsert(id: string, dto: AccountGroupUpsertDto): Promise<AccountGroupDto> {
    const ppm = parseMultiplier(dto.priceMultiplier);
    if (ppm === null) {
      throw ApiError.invalid(
        'priceMultiplier must be more than 0 and at most 100, with at most 6 decimals.',
        'priceMultiplier',
      );
    }
    const { created, termsChanged } = await this.groups.upsert({
      id,
      description: dto.description,
      priceMultiplier: formatMultiplier(ppm),
      rpm: dto.rpm,
      tpm: dto.tpm,
    });
    // A new group has no accounts yet, and a new description is in no key's cache: nothing cached can hold
    // what changed.
    if (!created && termsChanged) {
      this.authenticator.forgetAll();
      await this.bus.publishAll(InvalidationTopic.ApiKey);
    }
    return this.get(id);
  }

  async delete(id: string): Promise<void> {
    if (id === DEFAULT_GROUP_ID) {
      throw new ApiError(ErrorKind.Conflict, 'The default group cannot be deleted: new accounts join it.', 'groupId');
    }
    const outcome = await this.groups.deleteUnused(id);
    if (outcome === 'missing') {
      throw notFound(id);
    }
    if (outcome === 'in_use') {
      throw new ApiError(
        ErrorKind.Conflict,
        `The group '${id}' still has accounts. Move them to another group first.`,
        'groupId',
        'group_in_use',
      );
    }
  }
}

export const notFound = (id: string) =>
  new ApiError(ErrorKind.NotFound, `No account group with id '${id}'.`, 'groupId');
