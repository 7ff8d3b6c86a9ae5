import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DayRange } from 'src/common/http/date-range.dto';
import { MarginGrouping } from 'src/modules/reports/dto/margin.dto';
import { DataSource } from 'typeorm';

export interface MarginRow {
  date?: string;
  model?: string;
  channel_id?: string;
  requests: string;
  prompt_tokens: string;
  completion_tokens: string;
  revenue: string;
  upstream_cost: string;
  uncosted_requests: string;
  uncosted_revenue: string;
}

const GROUP_COLUMN: Record<MarginGrouping, string> = {
  day: `to_char(day, 'YYYY-MM-DD') AS date`,
  model: 'model_id AS model',
  channel: 'channel_id',
};

@Injectable()
export class ReportsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Sums of the per-channel daily rollup: its size grows with days × routes, never with requests. */
  margins(range: DayRange, groupings: MarginGrouping[]): Promise<MarginRow[]> {
    const params: string[] = [];
    const where: string[] = [];
    if (range.from !== null) {
      params.push(range.from);
      where.push(`day >= $${params.length}::date`);
    }
    if (range.to !== null) {
      params.push(range.to);
      where.push(`day <= $${params.length}::date`);
    }
    const columns = groupings.map((grouping) => `${GROUP_COLUMN[grouping]}, `).join('');
    const positions = groupings.map((_, index) => index + 1).join(', ');
    const grouped = groupings.length > 0 ? ` GROUP BY ${positions} ORDER BY ${positions}` : '';
    return this.dataSource.query<MarginRow[]>(
      `SELECT ${columns}COALESCE(SUM(requests), 0) AS requests, COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens,
         COALESCE(SUM(completion_tokens), 0) AS completion_tokens, COALESCE(SUM(revenue), 0) AS revenue,
         COALESCE(SUM(upstream_cost), 0) AS upstream_cost, COALESCE(SUM(uncosted_requests), 0) AS uncosted_requests,
         COALESCE(SUM(uncosted_revenue), 0) AS uncosted_revenue
       FROM usage_channel_daily${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}${grouped}`,
      params,
    );
  }
}
