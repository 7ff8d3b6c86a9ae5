import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { formatUsd } from 'src/common/money/money';
import { MONEY_PATTERN } from 'src/common/openapi/money-property';
import { ReferralsService } from 'src/modules/referrals/referrals.service';

export class ReferralSummaryDto {
  @ApiProperty({
    description: 'Share it: accounts registering with it are linked to you for good',
    example: 'K7QX2MPA',
  })
  referralCode: string;

  @ApiProperty({ example: 3 })
  invitedCount: number;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'All referral credit received, USD', example: '1.25' })
  totalCredited: string;
}

@ApiTags('console')
@ConsoleAuth()
@Controller('console/referrals')
export class ReferralsController {
  constructor(private readonly service: ReferralsService) {}

  @Get()
  @ApiOkResponse({ type: ReferralSummaryDto })
  async getReferrals(@CurrentPrincipal() principal: ConsolePrincipal): Promise<ReferralSummaryDto> {
    const summary = await this.service.summary(principal.accountId);
    if (!summary) {
      throw new ApiError(ErrorKind.NotFound, 'No such account.');
    }
    return {
      referralCode: summary.referralCode,
      invitedCount: summary.invited,
      totalCredited: formatUsd(summary.credited),
    };
  }
}
