import { Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { formatUsd, NANOS_PER_USD, parseUsd } from 'src/common/money/money';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { ApiKeyEntity } from 'src/modules/api-keys/api-key.entity';
import { displayPrefix, generateApiKeySecret, hashApiKey, maskKey } from 'src/modules/api-keys/api-key.secret';
import { ApiKeyChanges, ApiKeysRepository } from 'src/modules/api-keys/api-keys.repository';
import {
  ApiKeyCreateDto,
  ApiKeyCreatedResponseDto,
  ApiKeyResponseDto,
  ApiKeyUpdateDto,
} from 'src/modules/api-keys/dto/api-key.dto';
import { CatalogService } from 'src/modules/models/catalog.service';

// The hold script compares amounts as Lua numbers, exact below 2^53 nano-dollars (~$9M): a limit
// of at most $1M keeps the limit, what was spent and what is held well inside that.
const MAX_SPEND_LIMIT = 1_000_000n * NANOS_PER_USD;

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly repository: ApiKeysRepository,
    private readonly bus: InvalidationBus,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly catalog: CatalogService,
  ) {}

  async create(accountId: string, dto: ApiKeyCreateDto): Promise<ApiKeyCreatedResponseDto> {
    const controls = this.controls(dto);
    const secret = generateApiKeySecret();
    const key = await this.repository.create({
      accountId,
      name: dto.name,
      keyHash: hashApiKey(secret),
      keyPrefix: displayPrefix(secret),
      expiresAt: controls.expiresAt ?? null,
      allowedModels: controls.allowedModels ?? null,
      spendLimit: controls.spendLimit ?? null,
    });
    return { ...this.map(key), key: secret };
  }

  async list(accountId: string): Promise<ApiKeyResponseDto[]> {
    return (await this.repository.listLive(accountId)).map((key) => this.map(key));
  }

  async update(accountId: string, id: string, dto: ApiKeyUpdateDto): Promise<ApiKeyResponseDto> {
    const changes: ApiKeyChanges = { ...this.controls(dto) };
    if (dto.name !== undefined) {
      changes.name = dto.name;
    }
    if (dto.status !== undefined) {
      changes.status = dto.status;
    }
    if (Object.keys(changes).length === 0) {
      throw ApiError.invalid('Nothing to change: send name, status, expiresAt, allowedModels or spendLimit.');
    }
    return this.map(await this.change(accountId, id, changes));
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.change(accountId, id, { status: 'deleted' });
  }

  private async change(accountId: string, id: string, changes: ApiKeyChanges): Promise<ApiKeyEntity> {
    const key = await this.repository.updateLive(accountId, id, changes);
    if (!key) {
      throw new ApiError(ErrorKind.NotFound, `No API key with id '${id}'.`, 'keyId');
    }
    // Every API process drops its cached copy, so the change takes effect at once everywhere.
    this.authenticator.forget(key.keyHash);
    await this.bus.publish(InvalidationTopic.ApiKey, key.keyHash);
    return key;
  }

  /** The controls the body sets (null clears one), checked: each refusal names its field. */
  private controls(dto: ApiKeyCreateDto | ApiKeyUpdateDto): ApiKeyChanges {
    const changes: ApiKeyChanges = {};
    if (dto.expiresAt !== undefined) {
      changes.expiresAt = dto.expiresAt === null ? null : futureTime(dto.expiresAt);
    }
    if (dto.allowedModels !== undefined) {
      changes.allowedModels = dto.allowedModels === null ? null : this.knownModels(dto.allowedModels);
    }
    if (dto.spendLimit !== undefined) {
      changes.spendLimit = dto.spendLimit === null ? null : spendLimit(dto.spendLimit);
    }
    return changes;
  }

  private knownModels(ids: string[]): string[] {
    const unknown = ids.findIndex((id) => !this.catalog.get(id));
    if (unknown >= 0) {
      throw ApiError.invalid(`The model '${ids[unknown]}' does not exist.`, 'allowedModels');
    }
    return [...new Set(ids)];
  }

  private map(key: ApiKeyEntity): ApiKeyResponseDto {
    return {
      id: key.id,
      name: key.name,
      status: key.status,
      maskedKey: maskKey(key.keyPrefix),
      createdAt: key.createdAt.toISOString(),
      lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
      expiresAt: key.expiresAt?.toISOString() ?? null,
      allowedModels: key.allowedModels,
      spendLimit: key.spendLimit === null ? null : formatUsd(key.spendLimit),
      spent: formatUsd(key.spent),
    };
  }
}

function futureTime(text: string): Date {
  const at = new Date(text);
  if (Number.isNaN(at.getTime()) || at.getTime() <= Date.now()) {
    throw ApiError.invalid('expiresAt must be a time in the future.', 'expiresAt');
  }
  return at;
}

function spendLimit(text: string): bigint {
  const nanos = parseUsd(text);
  if (nanos === null || nanos <= 0n || nanos > MAX_SPEND_LIMIT) {
    throw ApiError.invalid('spendLimit must be over $0 and at most $1000000.', 'spendLimit');
  }
  return nanos;
}
