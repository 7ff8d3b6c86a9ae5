import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
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
}

@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  create(values: Pick<ApiKeyEntity, 'accountId' | 'name' | 'keyHash' | 'keyPrefix'>): Promise<ApiKeyEntity> {
    return this.keys.save(this.keys.create({ ...values, status: 'enabled' }));
  }

  listLive(accountId: string): Promise<ApiKeyEntity[]> {
    return this.keys.find({ where: { accountId, status: Not('deleted') }, order: { createdAt: 'ASC' } });
  }

  findByHash(keyHash: string): Promise<Pick<ApiKeyEntity, 'id' | 'accountId' | 'status'> | null> {
    return this.keys.findOne({ select: { id: true, accountId: true, status: true }, where: { keyHash } });
  }

  /**
   * Sets the status of a key that is not deleted, in one statement: a PATCH that raced a DELETE waits
   * for its row lock, re-checks the condition on the deleted row and changes nothing.
   */
  async setLiveStatus(accountId: string, id: string, status: ApiKeyStatus): Promise<ApiKeyEntity | null> {
    const result = await this.keys
      .createQueryBuilder()
      .update()
      .set({ status })
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
  };
}
