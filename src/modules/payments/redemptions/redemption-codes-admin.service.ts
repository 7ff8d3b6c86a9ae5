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
} from 'src/modules/payments/dto/redemption.dto';
import {
  RedemptionCodeRow,
  RedemptionCodesRepository,
} from 'src/modules/payments/redemptions/redemption-codes.repository';
import { DataSource } from 'typeorm';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const BATCH_CSV_COLUMNS = ['prefix', 'value', 'status', 'redeemedBy', 'redeemedAt'];

/** An operator's view of redemption codes: pages, voiding, and a batch as CSV. */
@Injectable()
export class RedemptionCodesAdminService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly codes: RedemptionCodesRepository,
  ) {}

  /** Newest first (redemption_codes_created_idx, or redemption_codes_batch_created_idx for one batch). */
  async list(query: AdminRedemptionCodeQueryDto): Promise<AdminRedemptionCodePageDto> {
    const cursor = decodeCursor(
      query.cursor,
      (p) => p.length === 2 && !Number.isNaN(Date.parse(p[0])) && UUID.test(p[1]),
    );
    const rows = await this.codes.page({
      batchId: query.batchId,
      status: query.status,
      before: cursor ? { createdAt: cursor[0], id: cursor[1] } : null,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      data: page.map(toDto),
      nextCursor: rows.length > query.limit ? encodeCursor([last.created_at_text, last.id]) : null,
    };
  }

  /** Voids one code; voiding a void code again changes nothing. A redeemed code cannot be voided (409). */
  async void(id: string): Promise<AdminRedemptionCodeDto> {
    const row = await this.codes.void(id);
    if (row) {
      return toDto(row);
    }
    const existing = await this.codes.findRow(id);
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
      const voided = await this.codes.voidBatch(manager, batchId);
      const counts = await this.codes.batchCounts(manager, batchId);
      if (counts.total === 0) {
        throw batchNotFound(batchId);
      }
      return { batchId, voided, redeemed: counts.redeemed };
    });
  }

  /** The whole batch as CSV (a batch holds at most MAX_CODES_PER_BATCH codes): prefix, value, status, who redeemed it and when. */
  async batchCsv(batchId: string): Promise<string> {
    const rows = await this.codes.batchRows(batchId);
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

function toDto(row: RedemptionCodeRow): AdminRedemptionCodeDto {
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
