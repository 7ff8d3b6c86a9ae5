import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { ApiError } from 'src/common/errors/api-error';
import { uuidParam } from 'src/common/http/params';
import { parseUsd } from 'src/common/money/money';
import { DepositsService } from 'src/modules/payments/chain/deposits.service';
import { AdminDepositPageDto, AdminDepositQueryDto } from 'src/modules/payments/chain/deposit.dto';
import { PaymentSettingsDto, PaymentSettingsUpdateDto } from 'src/modules/payments/dto/payment-settings.dto';
import { RedemptionBatchCreateDto, RedemptionBatchDto } from 'src/modules/payments/dto/redemption.dto';
import { AdminTopupDto, AdminTopupPageDto, AdminTopupQueryDto } from 'src/modules/payments/dto/topup.dto';
import { PaymentSettingsService } from 'src/modules/payments/settings/payment-settings.service';
import { RedemptionsService } from 'src/modules/payments/redemptions/redemptions.service';
import { formatRate, parseRate } from 'src/common/money/topup-amounts';
import { TopupsService } from 'src/modules/payments/topups/topups.service';

@ApiTags('admin')
@AdminAuth()
@Controller('admin')
export class AdminPaymentsController {
  constructor(
    private readonly settings: PaymentSettingsService,
    private readonly topups: TopupsService,
    private readonly redemptions: RedemptionsService,
    private readonly deposits: DepositsService,
  ) {}

  @Permission('read')
  @Get('payments/settings')
  @ApiOkResponse({ type: PaymentSettingsDto })
  async getPaymentSettings(): Promise<PaymentSettingsDto> {
    return PaymentSettingsDto.from(await this.settings.current());
  }

  @Permission('money:write')
  @Put('payments/settings')
  @ApiOkResponse({ type: PaymentSettingsDto })
  async putPaymentSettings(@Body() dto: PaymentSettingsUpdateDto): Promise<PaymentSettingsDto> {
    const rate = parseRate(dto.cnyPerUsd);
    if (rate === null) {
      throw ApiError.invalid(
        'cnyPerUsd must be a positive decimal string with at most 6 decimals, such as "7.2".',
        'cnyPerUsd',
      );
    }
    const minTopupUsd = parseUsd(dto.minTopupUsd);
    if (minTopupUsd === null || minTopupUsd <= 0n) {
      throw ApiError.invalid('minTopupUsd must be a positive decimal string in USD.', 'minTopupUsd');
    }
    const maxTopupUsd = parseUsd(dto.maxTopupUsd);
    if (maxTopupUsd === null || maxTopupUsd < minTopupUsd) {
      throw ApiError.invalid('maxTopupUsd must be a decimal string in USD, at least minTopupUsd.', 'maxTopupUsd');
    }
    const saved = await this.settings.replace({
      cnyPerUsd: formatRate(rate),
      minTopupUsd,
      maxTopupUsd,
      orderTtlMinutes: dto.orderTtlMinutes,
    });
    return PaymentSettingsDto.from(saved);
  }

  @Permission('read')
  @Get('topups')
  @ApiOkResponse({ type: AdminTopupPageDto })
  listAdminTopups(@Query() query: AdminTopupQueryDto): Promise<AdminTopupPageDto> {
    return this.topups.adminList(query);
  }

  @Permission('money:write')
  @Post('topups/:topupId/recheck')
  @HttpCode(200)
  @ApiOkResponse({ type: AdminTopupDto })
  recheckTopup(@Param('topupId', uuidParam('topupId')) topupId: string): Promise<AdminTopupDto> {
    return this.topups.recheck(topupId);
  }

  @Permission('read')
  @Get('deposits')
  @ApiOkResponse({ type: AdminDepositPageDto })
  listDeposits(@Query() query: AdminDepositQueryDto): Promise<AdminDepositPageDto> {
    return this.deposits.adminList(query);
  }

  @Permission('codes:write')
  @Post('redemption-codes')
  @ApiCreatedResponse({ type: RedemptionBatchDto })
  createRedemptionCodes(@Body() dto: RedemptionBatchCreateDto): Promise<RedemptionBatchDto> {
    return this.redemptions.createBatch(dto);
  }
}
