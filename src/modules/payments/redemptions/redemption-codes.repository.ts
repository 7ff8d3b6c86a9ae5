import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { RedemptionCodeState } from 'src/modules/payments/dto/redemption.dto';
import { RedemptionCodeEntity } from 'src/modules/payments/redemptions/redemption-code.entity';
import { EntityManager, Repository } from 'typeorm';

export type NewRedemptionCode = Pick<
  RedemptionCodeEntity,
  'codeHash' | 'codePrefix' | 'amount' | 'batchId' | 'expiresAt'
>;

/** A code as the operator's lists show it: never code_hash, the prefix only; its state as of the statement. */
export interface RedemptionCodeRow {
  id: string;
  batch_id: string;
  code_prefix: string | null;
  amount: string;
  state: RedemptionCodeState;
  created_at: Date;
  created_at_text: string;
  expires_at: Date | null;
  redeemed_at: Date | null;
  redeemed_by: string | null;
  voided_at: Date | null;
}

const COLUMNS = `id, batch_id, code_prefix, amount, created_at, created_at::text AS created_at_text, expires_at,
  redeemed_at, redeemed_by, voided_at,
  CASE WHEN redeemed_at IS NOT NULL THEN 'redeemed' WHEN voided_at IS NOT NULL THEN 'voided'
       WHEN expires_at IS NOT NULL AND expires_at <= now() THEN 'expired' ELSE 'active' END AS state`;

const STATE_WHERE: Record<RedemptionCodeState, string> = {
  redeemed: 'redeemed_at IS NOT NULL',
  voided: 'voided_at IS NOT NULL',
  expired: 'redeemed_at IS NULL AND voided_at IS NULL AND expires_at <= now()',
  active: 'redeemed_at IS NULL AND voided_at IS NULL AND (expires_at IS NULL OR expires_at > now())',
};

export interface RedemptionCodePageQuery {
  batchId?: string;
  status?: RedemptionCodeState;
  /** The last row of the page before: its created_at as Postgres wrote it, and its id. */
  before: { createdAt: string; id: string } | null;
  limit: number;
}

@Injectable()
export class RedemptionCodesRepository {
  constructor(@InjectRepository(RedemptionCodeEntity) private readonly codes: Repository<RedemptionCodeEntity>) {}

  /** Inserts the batch; the ids in the order given. */
  async insert(codes: NewRedemptionCode[]): Promise<string[]> {
    const result = await this.codes.insert(codes);
    return result.identifiers.map((identifier) => (identifier as { id: string }).id);
  }

  /**
   * Claims an unused, unvoided, unexpired code for the account in the caller's transaction: a conditional
   * update, so of concurrent claims exactly one gets the code. Null when there is none to claim.
   */
  async claim(
    manager: EntityManager,
    codeHash: string,
    accountId: string,
  ): Promise<{ id: string; amount: bigint } | null> {
    const [claimed] = await manager.query<{ id: string; amount: string }[]>(
      `WITH claimed AS (
         UPDATE redemption_codes SET redeemed_at = now(), redeemed_by = $2
         WHERE code_hash = $1 AND redeemed_at IS NULL AND voided_at IS NULL
           AND (expires_at IS NULL OR expires_at > now())
         RETURNING id, amount
       ) SELECT * FROM claimed`,
      [codeHash, accountId],
    );
    return claimed ? { id: claimed.id, amount: BigInt(claimed.amount) } : null;
  }

  /** Records the order a claimed code paid. */
  async setOrder(manager: EntityManager, id: string, orderId: string): Promise<void> {
    await manager.update(RedemptionCodeEntity, { id }, { orderId });
  }

  /** Newest first (redemption_codes_created_idx, or redemption_codes_batch_created_idx for one batch). */
  page(query: RedemptionCodePageQuery): Promise<RedemptionCodeRow[]> {
    const params: unknown[] = [];
    const where: string[] = [];
    if (query.batchId !== undefined) {
      params.push(query.batchId);
      where.push(`batch_id = $${params.length}::uuid`);
    }
    if (query.status !== undefined) {
      where.push(STATE_WHERE[query.status]);
    }
    if (query.before) {
      params.push(query.before.createdAt, query.before.id);
      where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    params.push(query.limit);
    return this.codes.query<RedemptionCodeRow[]>(
      `SELECT ${COLUMNS} FROM redemption_codes ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
  }

  async findRow(id: string): Promise<RedemptionCodeRow | null> {
    const [row] = await this.codes.query<RedemptionCodeRow[]>(`SELECT ${COLUMNS} FROM redemption_codes WHERE id = $1`, [
      id,
    ]);
    return row ?? null;
  }

  /** Voids the code unless it was redeemed (a void code stays as it was voided); null when none was. */
  async void(id: string): Promise<RedemptionCodeRow | null> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [[row]] = await this.codes.query<[RedemptionCodeRow[], number]>(
      `UPDATE redemption_codes SET voided_at = COALESCE(voided_at, now())
       WHERE id = $1 AND redeemed_at IS NULL RETURNING ${COLUMNS}`,
      [id],
    );
    return row ?? null;
  }

  /** Voids, in one statement, every code of the batch neither redeemed nor void; how many it voided. */
  async voidBatch(manager: EntityManager, batchId: string): Promise<number> {
    const [, voided] = await manager.query<[unknown[], number]>(
      `UPDATE redemption_codes SET voided_at = now()
       WHERE batch_id = $1 AND redeemed_at IS NULL AND voided_at IS NULL`,
      [batchId],
    );
    return voided;
  }

  /** How many codes the batch holds, and how many of them were redeemed. */
  async batchCounts(manager: EntityManager, batchId: string): Promise<{ total: number; redeemed: number }> {
    const [counts] = await manager.query<{ total: number; redeemed: number }[]>(
      `SELECT COUNT(*)::int AS total, COUNT(redeemed_at)::int AS redeemed FROM redemption_codes WHERE batch_id = $1`,
      [batchId],
    );
    return counts;
  }

  /** Every code of the batch, oldest first. */
  batchRows(batchId: string): Promise<RedemptionCodeRow[]> {
    return this.codes.query<RedemptionCodeRow[]>(
      `SELECT ${COLUMNS} FROM redemption_codes WHERE batch_id = $1 ORDER BY created_at, id`,
      [batchId],
    );
  }
}
