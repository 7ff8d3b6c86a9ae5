import { Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { ApiKeyEntity, ApiKeyStatus } from 'src/modules/api-keys/api-key.entity';
import { displayPrefix, generateApiKeySecret, hashApiKey, maskKey } from 'src/modules/api-keys/api-key.secret';
import { ApiKeysRepository } from 'src/modules/api-keys/api-keys.repository';
import { ApiKeyCreatedResponseDto, ApiKeyResponseDto } from 'src/modules/api-keys/dto/api-key.dto';

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly repository: ApiKeysRepository,
    private readonly bus: InvalidationBus,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  async create(accountId: string, name: string): Promise<ApiKeyCreatedResponseDto> {
    const secret = generateApiKeySecret();
    const key = await this.repository.create({
      accountId,
      name,
      keyHash: hashApiKey(secret),
      keyPrefix: displayPrefix(secret),
    });
    return { ...this.map(key), key: secret };
  }

  async list(accountId: string): Promise<ApiKeyResponseDto[]> {
    return (await this.repository.listLive(accountId)).map((key) => this.map(key));
  }

  async setStatus(accountId: string, id: string, status: 'enabled' | 'disabled'): Promise<ApiKeyResponseDto> {
    const key = await this.changeStatus(accountId, id, status);
    return this.map(key);
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.changeStatus(accountId, id, 'deleted');
  }

  private async changeStatus(accountId: string, id: string, status: ApiKeyStatus): Promise<ApiKeyEntity> {
    const key = await this.repository.setLiveStatus(accountId, id, status);
    if (!key) {
      throw new ApiError(ErrorKind.NotFound, `No API key with id '${id}'.`, 'keyId');
    }
    // Every API process drops its cached copy, so the change takes effect at once everywhere.
    this.authenticator.forget(key.keyHash);
    await this.bus.publish(InvalidationTopic.ApiKey, key.keyHash);
    return key;
  }

  private map(key: ApiKeyEntity): ApiKeyResponseDto {
    return {
      id: key.id,
      name: key.name,
      status: key.status,
      maskedKey: maskKey(key.keyPrefix),
      createdAt: key.createdAt.toISOString(),
      lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    };
  }
}
