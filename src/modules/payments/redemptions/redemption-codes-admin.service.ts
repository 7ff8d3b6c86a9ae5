import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { decodeCursor, encodeCursor } from 'src/common/http/cursor';
import { spreadsheetSafe, toCsv } from 'src/common/http/csv';
import { formatUsd } from 'src/common/money/money';
import {
  AdminRedemptionCodeDto,
  AdminRedemptionCodePageDto,
  AdminRedemptionCodeQueryDto,
  RedemptionBatchVoidDto,
  RedemptionCodeState,
} from 'src/modules/payments/dto/redemption.dto';
import { DataSource } from 'typeorm';

interface CodeRow {
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Never code_hash: lists show the prefix only. */
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

export const BATCH_CSV_COLUMNS = ['prefix', 'value', 'status', 'redeemedBy', 'redeemedAt'];

/** An operator's view of redemption codes: pages, voiding, and a batch as CSV. */
@Injectable()
export class RedemptionCodesAdminService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Newest first (redemption_codes_created_idx, or redemption_codes_batch_created_idx for one batch). */
  async list(query: AdminRedemptionCodeQueryDto): Promise<AdminRedemptionCodePageDto> {
    const cursor = decodeCursor(
      query.cursor,
      (p) => p.length === 2 && !Number.isNaN(Date.parse(p[0])) && UUID.test(p[1]),
    );
    const params: unknown[] = [];
    const where: string[] = [];
    if (query.batchId !== undefined) {
      params.push(query.batchId);
      where.push(`batch_id = $${params.length}::uuid`);
    }
    if (query.status !== undefined) {
      where.push(STATE_WHERE[query.status]);
    }
    if (cursor) {
      params.push(cursor[0], cursor[1]);
      where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    params.push(query.limit + 1);
    const rows = await this.dataSource.query<CodeRow[]>(
      `SELECT ${COLUMNS} FROM redemption_codes ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      data: page.map(toDto),
      nextCursor: rows.length > query.limit ? encodeCursor([last.created_at_text, last.id]) : null,
    };
  }

  /** Voids one code; voiding a void code again changes nothing. A redeemed code cannot be voided (409). */
  async void(id: string): Promise<AdminRedemptionCodeDto> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [[row]] = await this.dataSource.query<[CodeRow[], number]>(
      `UPDATE redemption_codes SET voided_at = COALESCE(voided_at, now())
       WHERE id = $1 AND redeemed_at IS NULL RETURNING ${COLUMNS}`,
      [id],
    );
    if (row) {
      return toDto(row);
    }
    const [existing] = await this.dataSource.query<CodeRow[]>(`SELECT ${COLUMNS} FROM redemption_codes WHERE id = $1`, [
      id,
    ]);
    if (!existing) {
      throw new ApiError(ErrorKind.NotFound, `No redemption code with id '${id}'.`, 'codeId');
    }
    throw new ApiError(
      ErrorKind.Conflict,
      'This code was already redeemed; it cannot be voided.',
      'codeId',
      'code_redeemed',
    );
  }

  /** Voids every code of the batch not yet redeemed, in one statement: a redemption racing it either wins or finds the code void. */
  async voidBatch(batchId: string): Promise<RedemptionBatchVoidDto> {
    return this.dataSource.transaction(async (manager) => {
      const [, voided] = await manager.query<[unknown[], number]>(
        `UPDATE redemption_codes SET voided_at = now()
         WHERE batch_id = $1 AND redeemed_at IS NULL AND voided_at IS NULL`,
        [batchId],
      );
      const [counts] = await manager.query<{ total: number; redeemed: number }[]>(
        `SELECT COUNT(*)::int AS total, COUNT(redeemed_at)::int AS redeemed FROM redemption_codes WHERE batch_id = $1`,
        [batchId],
      );
      if (counts.total === 0) {
        throw batchNotFound(batchId);
      }
      return { batchId, voided, redeemed: counts.redeemed };
    });
  }

  /** The whole batch as CSV (a batch holds at most MAX_CODES_PER_BATCH codes): prefix, value, status, who redeemed it and when. */
  async batchCsv(batchId: string): Promise<string> {
    const rows = await this.dataSource.query<CodeRow[]>(
      `SELECT ${COLUMNS} FROM redemption_codes WHERE batch_id = $1 ORDER BY created_at, id`,
      [batchId],
    );
    if (rows.length === 0) {
      throw batchNotFound(batchId);
    }
    return toCsv(
      BATCH_CSV_COLUMNS,
      rows.map((row) =>
        [
          row.code_prefix,
          formatUsd(BigInt(row.amount)),
          row.state,
          row.redeemed_by,
          row.redeemed_at?.toISOString() ?? null,
        ].map(spreadsheetSafe),
      ),
    );
  }
}

const batchNotFound = (batchId: string) =>
  new ApiError(ErrorKind.NotFound, `No redemption code batch with id '${batchId}'.`, 'batchId');

function toDto(row: CodeRow): AdminRedemptionCodeDto {
  return {
    id: row.id,
    batchId: row.batch_id,
    prefix: row.code_prefix,
    amount: formatUsd(BigInt(row.amount)),
    status: row.state,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    redeemedAt: row.redeemed_at?.toISOString() ?? null,
    redeemedBy: row.redeemed_by,
    voidedAt: row.voided_at?.toISOString() ?? null,
  };
}
