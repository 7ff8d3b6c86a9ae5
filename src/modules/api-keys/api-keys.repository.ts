import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { ApiKeyEntity, ApiKeyStatus } from 'src/modules/api-keys/api-key.entity';
import { Not, Repository } from 'typeorm';

@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  create(values: Pick<ApiKeyEntity, 'accountId' | 'name' | 'keyHash' | 'keyPrefix'>): Promise<ApiKeyEntity> {
    return this.keys.save(this.keys.create({ ...values, status: 'enabled' }));
  }

  listLive(accountId: string): Promise<ApiKeyEntity[]> {
    return this.keys.find({ where: { accountId, status: Not('deleted') }, order: { createdAt: 'ASC' } });
  }

  findLive(accountId: string, id: string): Promise<ApiKeyEntity | null> {
    return this.keys.findOne({ where: { id, accountId, status: Not('deleted') } });
  }

  findByHash(keyHash: string): Promise<Pick<ApiKeyEntity, 'id' | 'accountId' | 'status'> | null> {
    return this.keys.findOne({ select: { id: true, accountId: true, status: true }, where: { keyHash } });
  }

  async setStatus(id: string, status: ApiKeyStatus): Promise<void> {
    await this.keys.update({ id }, { status });
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.keys.update({ id }, { lastUsedAt: at });
  }
}
