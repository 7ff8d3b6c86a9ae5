import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { GroupTerms } from 'src/common/http/principal';
import { multiplierPpmOf } from 'src/common/money/price-multiplier';
import { ApiKeyEntity, ApiKeyStatus, KeyDisabler } from 'src/modules/api-keys/api-key.entity';
import { Not, Repository } from 'typeorm';

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  status: ApiKeyStatus;
  disabled_by: KeyDisabler | null;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  allowed_models: string[] | null;
  spend_limit: string | null;
  spent: string;
}

export interface OperatorKeyFilter {
  accountId?: string;
  prefix?: string;
  status?: ApiKeyStatus;
}

/** What the owner may change on a live key; an absent field stays as it is, null clears it. */
export type ApiKeyChanges = Partial<
  Pick<ApiKeyEntity, 'name' | 'status' | 'disabledBy' | 'expiresAt' | 'allowedModels' | 'spendLimit'>
>;

/** What authentication needs of a key: everything it checks, and what the admission hold enforces. */
export type ApiKeyAuthFields = Pick<
  ApiKeyEntity,
  'id' | 'accountId' | 'status' | 'disabledBy' | 'expiresAt' | 'allowedModels' | 'spendLimit'
> & { accountSuspended: boolean; group: GroupTerms };

interface AuthRow {
  id: string;
  account_id: string;
  status: ApiKeyStatus;
  disabled_by: KeyDisabler | null;
  expires_at: Date | null;
  allowed_models: string[] | null;
  spend_limit: string | null;
  suspended_at: Date | null;
  price_multiplier: string;
  rpm: number | null;
  tpm: number | null;
}

@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  create(
    values: Pick<
      ApiKeyEntity,
      'accountId' | 'name' | 'keyHash' | 'keyPrefix' | 'expiresAt' | 'allowedModels' | 'spendLimit'
    >,
  ): Promise<ApiKeyEntity> {
    return this.keys.save(this.keys.create({ ...values, status: 'enabled', disabledBy: null, spent: 0n }));
  }

  listLive(accountId: string): Promise<ApiKeyEntity[]> {
    return this.keys.find({ where: { accountId, status: Not('deleted') }, order: { createdAt: 'ASC' } });
  }

  /**
   * The key with its account's suspension and group terms, in one statement and one round trip: the
   * lookup every API process makes for a key it has not cached.
   */
  async findByHash(keyHash: string): Promise<ApiKeyAuthFields | null> {
    const [row] = await this.keys.query<AuthRow[]>(
      `SELECT k.id, k.account_id, k.status, k.disabled_by, k.expires_at, k.allowed_models, k.spend_limit,
              a.suspended_at, g.price_multiplier, g.rpm, g.tpm
         FROM "api_keys" k
         JOIN "accounts" a ON a.id = k.account_id
         JOIN "account_groups" g ON g.id = a.group_id
        WHERE k.key_hash = $1`,
      [keyHash],
    );
    if (!row) {
      return null;
    }
    return {
      id: row.id,
      accountId: row.account_id,
      status: row.status,
      disabledBy: row.disabled_by,
      expiresAt: row.expires_at,
      allowedModels: row.allowed_models,
      spendLimit: row.spend_limit === null ? null : BigInt(row.spend_limit),
      accountSuspended: row.suspended_at !== null,
      group: {
        priceMultiplierPpm: multiplierPpmOf({ priceMultiplier: row.price_multiplier }),
        rpm: row.rpm,
        tpm: row.tpm,
      },
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
   * row lock, re-checks the condition on the deleted row and changes nothing. `accountId` null: any
   * account's (an operator). `unlessOperatorDisabled`: a key an operator disabled is left as it is.
   */
  async updateLive(
    accountId: string | null,
    id: string,
    changes: ApiKeyChanges,
    unlessOperatorDisabled = false,
  ): Promise<ApiKeyEntity | null> {
    const query = this.keys
      .createQueryBuilder()
      .update()
      .set(changes)
      .where('id = :id AND status <> :deleted', { id, deleted: 'deleted' });
    if (accountId !== null) {
      query.andWhere('account_id = :accountId', { accountId });
    }
    if (unlessOperatorDisabled) {
      query.andWhere(`disabled_by IS DISTINCT FROM 'operator'`);
    }
    const rows = (await query.returning('*').execute()).raw as ApiKeyRow[];
    return rows.length > 0 ? toEntity(rows[0]) : null;
  }

  findLive(accountId: string | null, id: string): Promise<ApiKeyEntity | null> {
    return this.keys.findOne({
      where: { id, status: Not('deleted'), ...(accountId === null ? {} : { accountId }) },
    });
  }

  /**
   * An operator's page of keys, newest first, after the (created_at text, id) position: by account
   * (api_keys_account_idx), by the prefix's first characters (api_keys_prefix_idx) or all
   * (api_keys_created_idx).
   */
  async listForOperator(filter: OperatorKeyFilter, after: [string, string] | null, limit: number) {
    const params: unknown[] = [];
    const where: string[] = [];
    const add = (sql: (p: string) => string, value: unknown) => {
      if (value !== undefined) {
        params.push(value);
        where.push(sql(`$${params.length}`));
      }
    };
    add((p) => `account_id = ${p}::uuid`, filter.accountId);
    // The prefix is letters, digits and dashes (checked by the query DTO): nothing LIKE would read as a wildcard.
    add((p) => `key_prefix LIKE ${p} || '%'`, filter.prefix);
    add((p) => `status = ${p}`, filter.status);
    if (after) {
      params.push(after[0], after[1]);
      where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    params.push(limit);
    const rows = await this.keys.query<(ApiKeyRow & { created_at_text: string })[]>(
      `SELECT *, created_at::text AS created_at_text FROM api_keys
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return rows.map((row) => ({ key: toEntity(row), position: [row.created_at_text, row.id] as [string, string] }));
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
    disabledBy: row.disabled_by,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    allowedModels: row.allowed_models,
    spendLimit: row.spend_limit === null ? null : BigInt(row.spend_limit),
    spent: BigInt(row.spent),
  };
}
