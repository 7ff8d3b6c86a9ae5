import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
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

/** A 200 that is JSON, or CSV (RFC 4180, a header row) when the Accept header asks for text/csv. */
const jsonOrCsv = (type: new () => unknown, description: string, csvExample: string) =>
  ApiOkResponse({
    description,
    content: {
      'application/json': { schema: { $ref: getSchemaPath(type) } },
      'text/csv': { schema: { type: 'string', example: csvExample } },
    },
  });

@ApiTags('console')
@ApiExtraModels(UsageListDto, BillPageDto)
@ConsoleAuth()
@Controller('console')
export class UsageController {
  constructor(private readonly service: UsageService) {}

  /** JSON, or CSV when the Accept header asks for text/csv. */
  @Get('usage')
  @jsonOrCsv(
    UsageListDto,
    'Totals per group; CSV for Accept: text/csv',
    'date,model,requests,promptTokens,cachedTokens,cacheWriteTokens,completionTokens,reasoningTokens,cost\r\n2026-11-21,gpt-4o,42,12000,8000,0,3400,1200,0.064\r\n',
  )
  async getUsage(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Query() query: UsageQueryDto,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UsageListDto | string> {
    if (prefersCsv(accept)) {
      const csv = await this.service.usageCsv(principal.accountId, query);
      // Set once there is CSV: an error (a date that does not exist) is answered as the JSON error object.
      void reply.header('content-type', CSV_CONTENT_TYPE);
      return csv;
    }
    return { data: await this.service.usage(principal.accountId, query) };
  }

  /** JSON, or one page as CSV (its next cursor in x-next-cursor) when the Accept header asks for text/csv. */
  @Get('bills')
  @jsonOrCsv(
    BillPageDto,
    'One page of bills, newest first; for Accept: text/csv, the page as CSV and its next cursor in the x-next-cursor header',
    'requestId,createdAt,model,keyId,promptTokens,cachedTokens,cacheWriteTokens,completionTokens,reasoningTokens,cost,clientRequestId\r\n',
  )
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
  @ApiOkResponse({ type: LedgerPageDto })
  listLedgerEntries(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Query() query: PageQueryDto,
  ): Promise<LedgerPageDto> {
    return this.service.ledger(principal.accountId, query);
  }
}
