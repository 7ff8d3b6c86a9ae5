import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { GroupTerms } from 'src/common/http/principal';
import { multiplierPpmOf } from 'src/common/money/price-multiplier';
import { ApiKeyEntity, ApiKeyStatus } from 'src/modules/api-keys/api-key.entity';
import { Not, Repository } from 'typeorm';

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  status: ApiKeyStatus;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  allowed_models: string[] | null;
  spend_limit: string | null;
  spent: string;
}

/** What the owner may change on a live key; an absent field stays as it is, null clears it. */
export type ApiKeyChanges = Partial<
  Pick<ApiKeyEntity, 'name' | 'status' | 'expiresAt' | 'allowedModels' | 'spendLimit'>
>;

/** What authentication needs of a key: everything it checks, and what the admission hold enforces. */
export type ApiKeyAuthFields = Pick<
  ApiKeyEntity,
  'id' | 'accountId' | 'status' | 'expiresAt' | 'allowedModels' | 'spendLimit'
> & { accountSuspended: boolean; group: GroupTerms };

@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  create(
    values: Pick<
      ApiKeyEntity,
      'accountId' | 'name' | 'keyHash' | 'keyPrefix' | 'expiresAt' | 'allowedModels' | 'spendLimit'
    >,
  ): Promise<ApiKeyEntity> {
    return this.keys.save(this.keys.create({ ...values, status: 'enabled', spent: 0n }));
  }

  listLive(accountId: string): Promise<ApiKeyEntity[]> {
    return this.keys.find({ where: { accountId, status: Not('deleted') }, order: { createdAt: 'ASC' } });
  }

  async findByHash(keyHash: string): Promise<ApiKeyAuthFields | null> {
    const key = await this.keys.findOne({
      select: {
        id: true,
        accountId: true,
        status: true,
        expiresAt: true,
        allowedModels: true,
        spendLimit: true,
        account: { id: true, suspendedAt: true, group: { id: true, priceMultiplier: true, rpm: true, tpm: true } },
      },
      relations: { account: { group: true } },
      where: { keyHash },
    });
    if (!key) {
      return null;
    }
    const { account, ...fields } = key;
    const group = account!.group!;
    return {
      ...fields,
      accountSuspended: account!.suspendedAt !== null,
      group: { priceMultiplierPpm: multiplierPpmOf(group), rpm: group.rpm, tpm: group.tpm },
    };
  }

  /** The hashes of an account's keys that can still authenticate: what a change of the account must drop from caches. */
  async listLiveHashes(accountId: string): Promise<string[]> {
    const keys = await this.keys.find({ select: { keyHash: true }, where: { accountId, status: Not('deleted') } });
    return keys.map((key) => key.keyHash);
  }

  /** What a key has spent, as settled in Postgres (0 for a key that does not exist). */
  async findSpent(id: string): Promise<bigint> {
    const key = await this.keys.findOne({ select: { id: true, spent: true }, where: { id } });
    return key?.spent ?? 0n;
  }

  /**
   * Changes a key that is not deleted, in one statement: a PATCH that raced a DELETE waits for its
   * row lock, re-checks the condition on the deleted row and changes nothing.
   */
  async updateLive(accountId: string, id: string, changes: ApiKeyChanges): Promise<ApiKeyEntity | null> {
    const result = await this.keys
      .createQueryBuilder()
      .update()
      .set(changes)
      .where('id = :id AND account_id = :accountId AND status <> :deleted', { id, accountId, deleted: 'deleted' })
      .returning('*')
      .execute();
    const rows = result.raw as ApiKeyRow[];
    return rows.length > 0 ? toEntity(rows[0]) : null;
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.keys.update({ id }, { lastUsedAt: at });
  }
}

function toEntity(row: ApiKeyRow): ApiKeyEntity {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    keyHash: row.key_hash,
    keyPrefix: row.key_prefix,
    status: row.status,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    allowedModels: row.allowed_models,
    spendLimit: row.spend_limit === null ? null : BigInt(row.spend_limit),
    spent: BigInt(row.spent),
  };
}
