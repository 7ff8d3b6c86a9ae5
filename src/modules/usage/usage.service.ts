import { Injectable } from '@nestjs/common';
import { Cursor, decodeCursor, encodeCursor } from 'src/common/http/cursor';
import { dayRange } from 'src/common/http/date-range.dto';
import { toCsv } from 'src/common/http/csv';
import { formatUsd } from 'src/common/money/money';
import { LedgerEntryResponseDto } from 'src/modules/ledger/dto/ledger-entry.dto';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';
import {
  BillDto,
  BillPageDto,
  BillsQueryDto,
  OperatorBillPageDto,
  LedgerPageDto,
  UsageGrouping,
  UsageQueryDto,
  UsageRowDto,
} from 'src/modules/usage/dto/usage.dto';
import { BillRow, UsageRepository } from 'src/modules/usage/usage.repository';
import { PageQueryDto } from 'src/common/http/date-range.dto';

const GROUP_FIELD: Record<UsageGrouping, 'date' | 'model' | 'keyId'> = { day: 'date', model: 'model', key: 'keyId' };
const TOTAL_COLUMNS = [
  'requests',
  'promptTokens',
  'cachedTokens',
  'cacheWriteTokens',
  'completionTokens',
  'reasoningTokens',
  'cost',
] as const;
const BILL_COLUMNS = [
  'requestId',
  'createdAt',
  'model',
  'keyId',
  'promptTokens',
  'cachedTokens',
  'cacheWriteTokens',
  'completionTokens',
  'reasoningTokens',
  'cost',
  'clientRequestId',
] as const;

/** The console's money views: usage totals, one bill per request, and the ledger. */
@Injectable()
export class UsageService {
  constructor(
    private readonly repository: UsageRepository,
    private readonly ledgerEntries: LedgerRepository,
  ) {}

  async usage(accountId: string, query: UsageQueryDto): Promise<UsageRowDto[]> {
    const rows = await this.repository.totals(accountId, dayRange(query), query.groupBy, query.model, query.keyId);
    return rows.map((row) => ({
      ...(row.date === undefined ? {} : { date: row.date }),
      ...(row.model === undefined ? {} : { model: row.model }),
      ...(row.keyId === undefined ? {} : { keyId: row.keyId }),
      requests: Number(row.requests),
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
      cachedTokens: Number(row.cached_tokens),
      cacheWriteTokens: Number(row.cache_write_tokens),
      reasoningTokens: Number(row.reasoning_tokens),
      cost: formatUsd(BigInt(row.cost)),
    }));
  }

  /** The usage totals as CSV: the grouping columns in the order asked, then the totals. */
  async usageCsv(accountId: string, query: UsageQueryDto): Promise<string> {
    const columns = [...query.groupBy.map((grouping) => GROUP_FIELD[grouping]), ...TOTAL_COLUMNS];
    const rows = await this.usage(accountId, query);
    return toCsv(
      columns,
      rows.map((row) => columns.map((column) => row[column])),
    );
  }

  /** One page of bills as CSV; the cursor of the next page goes beside it (a header). */
  async billsCsv(accountId: string, query: BillsQueryDto): Promise<{ csv: string; nextCursor: string | null }> {
    const page = await this.bills(accountId, query);
    const rows = page.data.map((bill) => BILL_COLUMNS.map((column) => bill[column]));
    return { csv: toCsv([...BILL_COLUMNS], rows), nextCursor: page.nextCursor };
  }

  /** The customer's bills: their own X-Request-Id beside ours, never what the provider said. */
  bills(accountId: string, query: BillsQueryDto): Promise<BillPageDto> {
    return this.billPage(accountId, query, customerBill);
  }

  /** The operator's view of the same bills, with the provider's request id and the time to first byte. */
  operatorBills(accountId: string, query: BillsQueryDto): Promise<OperatorBillPageDto> {
    return this.billPage(accountId, query, (row) =>
      Object.assign(customerBill(row), {
        providerRequestId: row.provider_request_id,
        firstByteMs: row.first_byte_ms,
      }),
    );
  }

  private async billPage<Bill>(accountId: string, query: BillsQueryDto, map: (row: BillRow) => Bill) {
    const range = dayRange(query);
    const cursor = decodeCursor(query.cursor, ([at, id]) => !Number.isNaN(Date.parse(at)) && id !== undefined);
    const rows = await this.repository.bills(accountId, range, cursor, query.limit + 1, query.model, query.keyId, {
      requestId: query.requestId,
      clientRequestId: query.clientRequestId,
    });
    return paginate(rows, query.limit, (row) => [row.created_at_text, row.request_id], map);
  }

  async ledger(accountId: string, query: PageQueryDto): Promise<LedgerPageDto> {
    const range = dayRange(query);
    const cursor = decodeCursor(query.cursor, (position) => position.length === 1 && /^\d{1,19}$/.test(position[0]));
    const entries = await this.ledgerEntries.entries(accountId, range, cursor?.[0] ?? null, query.limit + 1);
    return paginate(
      entries,
      query.limit,
      (entry) => [entry.seq],
      (entry) => LedgerEntryResponseDto.from(entry),
    );
  }
}

function customerBill(row: BillRow): BillDto {
  return {
    requestId: row.request_id,
    createdAt: row.created_at.toISOString(),
    model: row.model_id,
    keyId: row.key_id,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    cachedTokens: row.cached_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    reasoningTokens: row.reasoning_tokens,
    cost: formatUsd(BigInt(row.charged)),
    clientRequestId: row.client_request_id,
  };
}

/** The repository fetched one row more than asked: its presence says there is a next page. */
function paginate<Row, Item>(
  rows: Row[],
  limit: number,
  position: (row: Row) => Cursor,
  map: (row: Row) => Item,
): { data: Item[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  return { data: page.map(map), nextCursor: more ? encodeCursor(position(page[page.length - 1])) : null };
}
