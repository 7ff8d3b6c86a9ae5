import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Cursor } from 'src/common/http/cursor';
import { UsageStatus } from 'src/modules/billing/usage-record.entity';
import { DataSource } from 'typeorm';

export interface RequestLogFilter {
  requestId?: string;
  clientRequestId?: string;
  accountId?: string;
  keyId?: string;
  model?: string;
  channel?: string;
  status?: UsageStatus;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
}

export interface RequestLogRow {
  request_id: string;
  created_at: Date;
  created_at_text: string;
  client_request_id: string | null;
  provider_request_id: string | null;
  account_id: string;
  key_id: string;
  model_id: string;
  channel_id: string;
  status: UsageStatus;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  usage_source: 'upstream' | 'estimated';
  cost: string;
  charged: string;
  upstream_latency_ms: number;
  first_byte_ms: number | null;
}

/**
 * The request log over usage_records, newest first. Every filter is an equality the indexes named
 * in docs/operators.md ("Request log") lead with, followed by (created_at, request_id): the page's
 * order. A key is searched within its account (`usage_records_account_key_created_idx`): the
 * account comes from api_keys, one row, so no index of its own is needed.
 */
@Injectable()
export class RequestLogRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  page(filter: RequestLogFilter, cursor: Cursor | null, limit: number): Promise<RequestLogRow[]> {
    const params: unknown[] = [];
    const where: string[] = [];
    const add = (sql: (p: string) => string, value: unknown) => {
      if (value !== undefined) {
        params.push(value);
        where.push(sql(`$${params.length}`));
      }
    };
    add((p) => `request_id = ${p}`, filter.requestId);
    add((p) => `client_request_id = ${p}`, filter.clientRequestId);
    add((p) => `account_id = ${p}::uuid`, filter.accountId);
    add(
      (p) => `key_id = ${p}::uuid AND account_id = (SELECT account_id FROM api_keys WHERE id = ${p}::uuid)`,
      filter.keyId,
    );
    add((p) => `model_id = ${p}`, filter.model);
    add((p) => `channel_id = ${p}`, filter.channel);
    add((p) => `status = ${p}`, filter.status);
    add((p) => `created_at >= ${p}::timestamptz`, filter.from?.toISOString());
    add((p) => `created_at < ${p}::timestamptz`, filter.to?.toISOString());
    if (cursor) {
      params.push(cursor[0], cursor[1]);
      where.push(`(created_at, request_id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(limit);
    return this.dataSource.query<RequestLogRow[]>(
      `SELECT request_id, created_at, created_at::text AS created_at_text, client_request_id, provider_request_id,
              account_id, key_id, model_id, channel_id, status, prompt_tokens, completion_tokens, cached_tokens,
              cache_write_tokens, reasoning_tokens, usage_source, cost, charged, upstream_latency_ms, first_byte_ms
       FROM usage_records ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, request_id DESC LIMIT $${params.length}`,
      params,
    );
  }
}
