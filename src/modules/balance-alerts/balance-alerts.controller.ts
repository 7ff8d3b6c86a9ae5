import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError } from 'src/common/errors/api-error';
import { formatUsd, NANOS_PER_USD, parseUsd } from 'src/common/money/money';
import { BalanceAlertsRepository } from 'src/modules/balance-alerts/balance-alerts.repository';
import { BalanceAlertResponseDto, BalanceAlertUpdateDto } from 'src/modules/balance-alerts/dto/balance-alert.dto';

const MAX_THRESHOLD = 1_000_000n * NANOS_PER_USD;

/** The account's low-balance alert; the worker checks it after each settlement (LowBalanceAlerts). */
@ApiTags('console')
@ConsoleAuth()
@Controller('console/account/alerts')
export class BalanceAlertsController {
  constructor(private readonly alerts: BalanceAlertsRepository) {}

  @Get()
  @ApiOkResponse({ type: BalanceAlertResponseDto })
  async getBalanceAlert(@CurrentPrincipal() principal: ConsolePrincipal): Promise<BalanceAlertResponseDto> {
    const setting = await this.alerts.find(principal.accountId);
    return {
      lowBalanceThreshold: setting ? formatUsd(setting.threshold) : null,
      alertSent: setting?.alertSent ?? false,
    };
  }

  @Put()
  @ApiOkResponse({ type: BalanceAlertResponseDto })
  async setBalanceAlert(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Body() dto: BalanceAlertUpdateDto,
  ): Promise<BalanceAlertResponseDto> {
    if (dto.lowBalanceThreshold === null) {
      await this.alerts.remove(principal.accountId);
      return { lowBalanceThreshold: null, alertSent: false };
    }
    const threshold = parseUsd(dto.lowBalanceThreshold);
    if (threshold === null || threshold <= 0n || threshold > MAX_THRESHOLD) {
      throw ApiError.invalid('lowBalanceThreshold must be over $0 and at most $1000000.', 'lowBalanceThreshold');
    }
    await this.alerts.set(principal.accountId, threshold);
    return { lowBalanceThreshold: formatUsd(threshold), alertSent: false };
  }
}
