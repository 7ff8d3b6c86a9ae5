import { Body, Controller, Get, Ip, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { uuidParam } from 'src/common/http/params';
import { RequireVerifiedEmail } from 'src/modules/accounts/verified-email.guard';
import { LedgerEntryResponseDto } from 'src/modules/ledger/dto/ledger-entry.dto';
import { DepositsService } from 'src/modules/payments/chain/deposits.service';
import { DepositAddressListDto } from 'src/modules/payments/chain/deposit.dto';
import { RedemptionCreateDto } from 'src/modules/payments/dto/redemption.dto';
import { TopupCreateDto, TopupDto, TopupPageDto, TopupPageQueryDto } from 'src/modules/payments/dto/topup.dto';
import { RedemptionsService } from 'src/modules/payments/redemptions/redemptions.service';
import { TopupsService } from 'src/modules/payments/topups/topups.service';

@ApiTags('console')
@ConsoleAuth()
@Controller('console')
export class ConsoleTopupsController {
  constructor(
    private readonly topups: TopupsService,
    private readonly redemptions: RedemptionsService,
    private readonly deposits: DepositsService,
  ) {}

  @Post('topups')
  @RequireVerifiedEmail()
  @ApiCreatedResponse({ type: TopupDto })
  createTopup(@CurrentPrincipal() principal: ConsolePrincipal, @Body() dto: TopupCreateDto): Promise<TopupDto> {
    return this.topups.create(principal.accountId, dto);
  }

  @Get('topups/:topupId')
  @ApiOkResponse({ type: TopupDto })
  getTopup(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Param('topupId', uuidParam('topupId')) topupId: string,
  ): Promise<TopupDto> {
    return this.topups.get(principal.accountId, topupId);
  }

  @Get('topups')
  @ApiOkResponse({ type: TopupPageDto })
  listTopups(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Query() query: TopupPageQueryDto,
  ): Promise<TopupPageDto> {
    return this.topups.list(principal.accountId, query);
  }

  @Get('deposit-addresses')
  @RequireVerifiedEmail()
  @ApiOkResponse({ type: DepositAddressListDto })
  listDepositAddresses(@CurrentPrincipal() principal: ConsolePrincipal): Promise<DepositAddressListDto> {
    return this.deposits.addressesOf(principal.accountId);
  }

  @Post('redemptions')
  @RequireVerifiedEmail()
  @ApiCreatedResponse({ type: LedgerEntryResponseDto })
  redeemCode(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Body() dto: RedemptionCreateDto,
    @Ip() ip: string,
  ): Promise<LedgerEntryResponseDto> {
    return this.redemptions.redeem(principal.accountId, dto.code, ip);
  }
}
