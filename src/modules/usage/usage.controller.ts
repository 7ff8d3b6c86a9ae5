import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { CSV_CONTENT_TYPE, prefersCsv } from 'src/common/http/csv';
import { PageQueryDto } from 'src/common/http/date-range.dto';
import {
  BillPageDto,
  BillsQueryDto,
  LedgerPageDto,
  UsageListDto,
  UsageQueryDto,
} from 'src/modules/usage/dto/usage.dto';
import { UsageService } from 'src/modules/usage/usage.service';

/** The header that carries the next page's cursor beside a CSV page of bills. */
export const NEXT_CURSOR_HEADER = 'x-next-cursor';

@ApiTags('console')
@ConsoleAuth()
@Controller('console')
export class UsageController {
  constructor(private readonly service: UsageService) {}

  /** JSON, or CSV when the Accept header asks for text/csv. */
  @Get('usage')
  async getUsage(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Query() query: UsageQueryDto,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UsageListDto | string> {
    if (prefersCsv(accept)) {
      void reply.header('content-type', CSV_CONTENT_TYPE);
      return this.service.usageCsv(principal.accountId, query);
    }
    return { data: await this.service.usage(principal.accountId, query) };
  }

  /** JSON, or one page as CSV (its next cursor in x-next-cursor) when the Accept header asks for text/csv. */
  @Get('bills')
  async listBills(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Query() query: BillsQueryDto,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BillPageDto | string> {
    if (prefersCsv(accept)) {
      const { csv, nextCursor } = await this.service.billsCsv(principal.accountId, query);
      void reply.headers({
        'content-type': CSV_CONTENT_TYPE,
        ...(nextCursor ? { [NEXT_CURSOR_HEADER]: nextCursor } : {}),
      });
      return csv;
    }
    return this.service.bills(principal.accountId, query);
  }

  @Get('ledger')
  listLedgerEntries(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Query() query: PageQueryDto,
  ): Promise<LedgerPageDto> {
    return this.service.ledger(principal.accountId, query);
  }
}
