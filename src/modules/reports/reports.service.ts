import { Injectable } from '@nestjs/common';
import { dayRange } from 'src/common/http/date-range.dto';
import { formatUsd } from 'src/common/money/money';
import { MarginQueryDto, MarginReportDto, MarginRowDto, MarginTotalsDto } from 'src/modules/reports/dto/margin.dto';
import { marginOf } from 'src/modules/reports/margin';
import { MarginRow, ReportsRepository } from 'src/modules/reports/reports.repository';

const usdOrNull = (nanos: bigint | null) => (nanos === null ? null : formatUsd(nanos));

/** The operator's money reports, read from rollups kept by settlement. */
@Injectable()
export class ReportsService {
  constructor(private readonly repository: ReportsRepository) {}

  async margin(query: MarginQueryDto): Promise<MarginReportDto> {
    const range = dayRange(query);
    const [rows, [total]] = await Promise.all([
      this.repository.margins(range, query.groupBy),
      this.repository.margins(range, []),
    ]);
    return {
      data: rows.map((row) => ({
        ...(row.date === undefined ? {} : { date: row.date }),
        ...(row.model === undefined ? {} : { model: row.model }),
        ...(row.channel_id === undefined ? {} : { channelId: row.channel_id }),
        ...totalsOf(row),
      })) satisfies MarginRowDto[],
      total: totalsOf(total),
    };
  }
}

function totalsOf(row: MarginRow): MarginTotalsDto {
  const totals = {
    requests: BigInt(row.requests),
    promptTokens: BigInt(row.prompt_tokens),
    completionTokens: BigInt(row.completion_tokens),
    revenue: BigInt(row.revenue),
    upstreamCost: BigInt(row.upstream_cost),
    uncostedRequests: BigInt(row.uncosted_requests),
    uncostedRevenue: BigInt(row.uncosted_revenue),
  };
  const margin = marginOf(totals);
  return {
    requests: Number(totals.requests),
    promptTokens: Number(totals.promptTokens),
    completionTokens: Number(totals.completionTokens),
    revenue: formatUsd(totals.revenue),
    upstreamCost: usdOrNull(margin.upstreamCost),
    margin: usdOrNull(margin.margin),
    costKnown: margin.costKnown,
    uncostedRequests: Number(totals.uncostedRequests),
    uncostedRevenue: formatUsd(totals.uncostedRevenue),
    knownUpstreamCost: formatUsd(totals.upstreamCost),
    knownMargin: formatUsd(margin.knownMargin),
  };
}
