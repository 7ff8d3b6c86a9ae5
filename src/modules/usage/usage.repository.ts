import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Cursor } from 'src/common/http/cursor';
import { DayRange } from 'src/common/http/date-range.dto';
import { UsageGrouping } from 'src/modules/usage/dto/usage.dto';
import { DataSource } from 'typeorm';

export interface UsageTotalsRow {
  date?: string;
  model?: string;
  keyId?: string;
  requests: string;
  prompt_tokens: string;
  completion_tokens: string;
  cached_tokens: string;
  cache_write_tokens: string;
  reasoning_tokens: string;
  cost: string;
}

export interface BillRow {
  request_id: string;
  created_at: Date;
  created_at_text: string;
  model_id: string;
  key_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  charged: string;
  client_request_id: string | null;
  provider_request_id: string | null;
  first_byte_ms: number | null;
}

/** Each grouping's column, named as the usage row's field. */
const GROUP_COLUMN: Record<UsageGrouping, string> = {
  day: `day::text AS "date"`,
  model: `model_id AS "model"`,
  key: `key_id::text AS "keyId"`,
};

/** Builds `AND …` clauses with numbered parameters. */
class Filters {
  readonly clauses: string[] = [];
  constructor(readonly params: unknown[]) {}

  add(sql: (placeholder: string) => string, value: unknown): void {
    if (value !== null && value !== undefined) {
      this.params.push(value);
      this.clauses.push(sql(`$${this.params.length}`));
    }
  }

  get sql(): string {
    return this.clauses.map((clause) => ` AND ${clause}`).join('');
  }
}

@Injectable()
export class UsageRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Totals from the daily rollup, so the cost of a query does not grow with the number of requests. */
  totals(accountId: string, range: DayRange, groupings: UsageGrouping[], model?: string, keyId?: string) {
    const filters = new Filters([accountId]);
    filters.add((p) => `day >= ${p}::date`, range.from);
    filters.add((p) => `day <= ${p}::date`, range.to);
    filters.add((p) => `model_id = ${p}`, model);
    filters.add((p) => `key_id = ${p}::uuid`, keyId);
    const columns = groupings.map((grouping) => GROUP_COLUMN[grouping]).join(', ');
    // GROUP BY and ORDER BY the select list's positions: the groupings, in the order asked.
    const positions = groupings.map((_, index) => index + 1).join(', ');
    return this.dataSource.query<UsageTotalsRow[]>(
      `SELECT ${columns}, SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens,
              SUM(completion_tokens) AS completion_tokens, SUM(cached_tokens) AS cached_tokens,
              SUM(cache_write_tokens) AS cache_write_tokens, SUM(reasoning_tokens) AS reasoning_tokens,
              SUM(cost) AS cost
       FROM usage_daily WHERE account_id = $1${filters.sql}
       GROUP BY ${positions} ORDER BY ${positions}`,
      filters.params,
    );
  }

  bills(
    accountId: string,
    range: DayRange,
    cursor: Cursor | null,
    limit: number,
    model?: string,
    keyId?: string,
    ids: { requestId?: string; clientRequestId?: string } = {},
  ) {
    const filters = new Filters([accountId]);
    // The primary key and usage_records_client_request_idx find these; the account keeps them to its own.
    filters.add((p) => `request_id = ${p}`, ids.requestId);
    filters.add((p) => `client_request_id = ${p}`, ids.clientRequestId);
    filters.add((p) => `created_at >= (${p}::date::timestamp AT TIME ZONE 'UTC')`, range.from);
    filters.add((p) => `created_at < ((${p}::date + 1)::timestamp AT TIME ZONE 'UTC')`, range.to);
    filters.add((p) => `model_id = ${p}`, model);
    filters.add((p) => `key_id = ${p}::uuid`, keyId);
    addCursor(filters, cursor, 'request_id');
    filters.params.push(limit);
    return this.dataSource.query<BillRow[]>(
      `SELECT request_id, created_at, created_at::text AS created_at_text, model_id, key_id,
              prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, charged,
              client_request_id, provider_request_id, first_byte_ms
       FROM usage_records WHERE account_id = $1${filters.sql}
       ORDER BY created_at DESC, request_id DESC LIMIT $${filters.params.length}`,
      filters.params,
    );
  }
}

function addCursor(filters: Filters, cursor: Cursor | null, idColumn: string): void {
  if (cursor) {
    filters.params.push(cursor[0], cursor[1]);
    const at = filters.params.length - 1;
    filters.clauses.push(`(created_at, ${idColumn}) < ($${at}::timestamptz, $${at + 1})`);
  }
}
