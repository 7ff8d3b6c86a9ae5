import { Injectable } from '@nestjs/common';
import { ApiError } from 'src/common/errors/api-error';
import { decodeCursor, encodeCursor } from 'src/common/http/cursor';
import { formatUsd } from 'src/common/money/money';
import { RequestLogEntryDto, RequestLogPageDto, RequestLogQueryDto } from 'src/modules/usage/dto/request-log.dto';
import { RequestLogRepository } from 'src/modules/usage/request-log.repository';

/** Support's search over every account's requests (`GET /admin/requests`). */
@Injectable()
export class RequestLogService {
  constructor(private readonly repository: RequestLogRepository) {}

  async page(query: RequestLogQueryDto): Promise<RequestLogPageDto> {
    const from = query.from === undefined ? undefined : new Date(query.from);
    const to = query.to === undefined ? undefined : new Date(query.to);
    if (from && to && from.getTime() >= to.getTime()) {
      throw ApiError.invalid('from must be before to.', 'from');
    }
    const cursor = decodeCursor(query.cursor, (p) => p.length === 2 && !Number.isNaN(Date.parse(p[0])));
    const rows = await this.repository.page(
      {
        requestId: query.requestId,
        clientRequestId: query.clientRequestId,
        accountId: query.accountId,
        keyId: query.keyId,
        model: query.model,
        channel: query.channel,
        status: query.status,
        from,
        to,
      },
      cursor,
      query.limit + 1,
    );
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      data: page.map((row): RequestLogEntryDto => ({
        requestId: row.request_id,
        clientRequestId: row.client_request_id,
        providerRequestId: row.provider_request_id,
        createdAt: row.created_at.toISOString(),
        accountId: row.account_id,
        keyId: row.key_id,
        model: row.model_id,
        channel: row.channel_id,
        status: row.status,
        promptTokens: row.prompt_tokens,
        completionTokens: row.completion_tokens,
        cachedTokens: row.cached_tokens,
        cacheWriteTokens: row.cache_write_tokens,
        reasoningTokens: row.reasoning_tokens,
        usageSource: row.usage_source,
        cost: formatUsd(BigInt(row.cost)),
        charged: formatUsd(BigInt(row.charged)),
        upstreamLatencyMs: row.upstream_latency_ms,
        firstByteMs: row.first_byte_ms,
      })),
      nextCursor: rows.length > query.limit ? encodeCursor([last.created_at_text, last.request_id]) : null,
    };
  }
}
