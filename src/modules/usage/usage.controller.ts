import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { PageQueryDto } from 'src/common/http/date-range.dto';
import {
  BillPageDto,
  BillsQueryDto,
  LedgerPageDto,
  UsageListDto,
  UsageQueryDto,
} from 'src/modules/usage/dto/usage.dto';
import { UsageService } from 'src/modules/usage/usage.service';

@ApiTags('console')
@ConsoleAuth()
@Controller('console')
export class UsageController {
  constructor(private readonly service: UsageService) {}

  @Get('usage')
  async getUsage(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Query() query: UsageQueryDto,
  ): Promise<UsageListDto> {
    return { data: await this.service.usage(principal.accountId, query) };
  }

  @Get('bills')
  listBills(@CurrentPrincipal() principal: ConsolePrincipal, @Query() query: BillsQueryDto): Promise<BillPageDto> {
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
