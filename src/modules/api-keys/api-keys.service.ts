import { Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { formatUsd, NANOS_PER_USD, parseUsd } from 'src/common/money/money';
import { decodeCursor, encodeCursor } from 'src/common/http/cursor';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { ApiKeyEntity, ApiKeyStatus } from 'src/modules/api-keys/api-key.entity';
import { displayPrefix, generateApiKeySecret, hashApiKey, maskKey } from 'src/modules/api-keys/api-key.secret';
import { ApiKeyChanges, ApiKeysRepository } from 'src/modules/api-keys/api-keys.repository';
import { AdminKeyDto, AdminKeyPageDto, AdminKeyQueryDto } from 'src/modules/api-keys/dto/admin-key.dto';
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
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
      changes.disabledBy = dto.status === 'disabled' ? 'owner' : null;
    }
    if (Object.keys(changes).length === 0) {
      throw ApiError.invalid('Nothing to change: send name, status, expiresAt, allowedModels or spendLimit.');
    }
    // The owner may rename or re-control a key an operator disabled, never change its status.
    const guarded = dto.status !== undefined;
    const key = await this.repository.updateLive(accountId, id, changes, guarded);
    if (!key && guarded && (await this.repository.findLive(accountId, id))?.disabledBy === 'operator') {
      throw new ApiError(
        ErrorKind.Conflict,
        'An operator disabled this key; only an operator can enable it. Contact support.',
        'status',
        'key_disabled_by_operator',
      );
    }
    return this.map(await this.announce(key, id));
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.announce(await this.repository.updateLive(accountId, id, { status: 'deleted', disabledBy: null }), id);
  }

  /** Keys of every account, newest first, for an operator. */
  async listForOperator(query: AdminKeyQueryDto): Promise<AdminKeyPageDto> {
    const cursor = decodeCursor(
      query.cursor,
      (p) => p.length === 2 && !Number.isNaN(Date.parse(p[0])) && UUID.test(p[1]),
    );
    const rows = await this.repository.listForOperator(
      { accountId: query.accountId, prefix: query.prefix, status: query.status },
      cursor as [string, string] | null,
      query.limit + 1,
    );
    const page = rows.slice(0, query.limit);
    return {
      data: page.map(({ key }) => this.operatorView(key)),
      nextCursor: rows.length > query.limit ? encodeCursor(page[page.length - 1].position) : null,
    };
  }

  operatorView(key: ApiKeyEntity): AdminKeyDto {
    return { ...this.map(key), accountId: key.accountId };
  }

  /** An operator's change of any account's key: `disabled` by the operator, `enabled`, or `deleted`. */
  async setStatusAsOperator(id: string, status: ApiKeyStatus): Promise<ApiKeyEntity> {
    const disabledBy = status === 'disabled' ? 'operator' : null;
    return this.announce(await this.repository.updateLive(null, id, { status, disabledBy }), id);
  }

  private async announce(key: ApiKeyEntity | null, id: string): Promise<ApiKeyEntity> {
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

  map(key: ApiKeyEntity): ApiKeyResponseDto {
    return {
      id: key.id,
      name: key.name,
      status: key.status,
      disabledBy: key.disabledBy,
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
