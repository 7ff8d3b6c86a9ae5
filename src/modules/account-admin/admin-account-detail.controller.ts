import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { PageQueryDto } from 'src/common/http/date-range.dto';
import { uuidParam } from 'src/common/http/params';
import { AccountAdminService } from 'src/modules/account-admin/account-admin.service';
import { AccountDetailDto, AdminAccountDto, SuspensionDto } from 'src/modules/account-admin/dto/account-detail.dto';
import { AccountGroupAssignmentDto } from 'src/modules/account-admin/dto/account-group.dto';
import { TopupPageDto, TopupPageQueryDto } from 'src/modules/payments/dto/topup.dto';
import {
  OperatorBillPageDto,
  BillsQueryDto,
  LedgerPageDto,
  UsageListDto,
  UsageQueryDto,
} from 'src/modules/usage/dto/usage.dto';

const accountId = () => Param('accountId', uuidParam('accountId'));

@ApiTags('admin')
@AdminAuth()
@Controller('admin/accounts/:accountId')
export class AdminAccountDetailController {
  constructor(private readonly service: AccountAdminService) {}

  @Permission('read')
  @Get()
  @ApiOkResponse({ type: AccountDetailDto })
  getAccountDetail(@accountId() id: string): Promise<AccountDetailDto> {
    return this.service.detail(id);
  }

  @Permission('read')
  @Get('usage')
  @ApiOkResponse({ type: UsageListDto })
  async getAccountUsage(@accountId() id: string, @Query() query: UsageQueryDto): Promise<UsageListDto> {
    return { data: await this.service.usageOf(id, query) };
  }

  @Permission('read')
  @Get('ledger')
  @ApiOkResponse({ type: LedgerPageDto })
  getAccountLedger(@accountId() id: string, @Query() query: PageQueryDto): Promise<LedgerPageDto> {
    return this.service.ledgerOf(id, query);
  }

  @Permission('read')
  @Get('bills')
  @ApiOkResponse({ type: OperatorBillPageDto })
  getAccountBills(@accountId() id: string, @Query() query: BillsQueryDto): Promise<OperatorBillPageDto> {
    return this.service.billsOf(id, query);
  }

  @Permission('read')
  @Get('topups')
  @ApiOkResponse({ type: TopupPageDto })
  getAccountTopups(@accountId() id: string, @Query() query: TopupPageQueryDto): Promise<TopupPageDto> {
    return this.service.topupsOf(id, query);
  }

  @Permission('access:write')
  @Post('suspend')
  @HttpCode(200)
  @ApiOkResponse({ type: AdminAccountDto })
  suspendAccount(@accountId() id: string, @Body() dto: SuspensionDto): Promise<AdminAccountDto> {
    return this.service.setSuspended(id, true, dto.reason);
  }

  @Permission('access:write')
  @Post('unsuspend')
  @HttpCode(200)
  @ApiOkResponse({ type: AdminAccountDto })
  unsuspendAccount(@accountId() id: string): Promise<AdminAccountDto> {
    return this.service.setSuspended(id, false);
  }

  /** Moves the account into a group (its price multiplier and default limits apply from its next request). */
  @Put('group')
  @Permission('access:write')
  @ApiOkResponse({ type: AdminAccountDto })
  setAccountGroup(@accountId() id: string, @Body() dto: AccountGroupAssignmentDto): Promise<AdminAccountDto> {
    return this.service.setGroup(id, dto.groupId);
  }
}
