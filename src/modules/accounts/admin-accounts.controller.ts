import { Body, Controller, Get, Headers, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { uuidParam } from 'src/common/http/params';
import { AccountsService } from 'src/modules/accounts/accounts.service';
import {
  AccountListResponseDto,
  AccountSearchQueryDto,
  AdjustmentCreateDto,
  AdjustmentResponseDto,
} from 'src/modules/accounts/dto/account.dto';

@ApiTags('admin')
@AdminAuth()
@Controller('admin/accounts')
export class AdminAccountsController {
  constructor(private readonly service: AccountsService) {}

  @Permission('read')
  @Get()
  @ApiOkResponse({ type: AccountListResponseDto })
  async searchAccounts(@Query() query: AccountSearchQueryDto): Promise<AccountListResponseDto> {
    return { data: await this.service.search(query.email) };
  }

  @Permission('money:write')
  @Post(':accountId/adjustments')
  @ApiHeader({
    name: 'idempotency-key',
    required: false,
    description: 'Idempotency-Key: makes a retried call apply only once',
    schema: { type: 'string', example: 'adj-2026-11-21-001', maxLength: 200 },
  })
  @ApiCreatedResponse({ type: AdjustmentResponseDto })
  createAdjustment(
    @Param('accountId', uuidParam('accountId')) accountId: string,
    @Body() dto: AdjustmentCreateDto,
    @Headers('idempotency-key') idempotencyKey?: string,
  ): Promise<AdjustmentResponseDto> {
    return this.service.adjust(accountId, dto.amount, dto.reason, idempotencyKey);
  }
}
