import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { formatUsd } from 'src/common/money/money';
import { MONEY_PATTERN } from 'src/common/openapi/money-property';
import { maskedEmail } from 'src/modules/referrals/masked-email';
import { INVITEES_LISTED } from 'src/modules/referrals/referrals.repository';
import { ReferralsService } from 'src/modules/referrals/referrals.service';

export class InviteeDto {
  @ApiProperty({ description: "The invitee's address, masked", example: 'a***@example.com' })
  email: string;

  @ApiProperty({
    description:
      "When the referral took effect: the invitee's address verification or its first paid top-up, whichever came first",
    example: '2026-11-21T08:30:00.000Z',
    format: 'date-time',
  })
  effectiveAt: string;

  @ApiProperty({
    description: 'When the invitee verified its address; null if it has not (its top-up made the referral count)',
    example: '2026-11-21T08:30:00.000Z',
    format: 'date-time',
    type: String,
    nullable: true,
  })
  verifiedAt: string | null;

  @ApiProperty({
    pattern: MONEY_PATTERN,
    description: "Referral credit the invitee's usage brought, USD",
    example: '0.42',
  })
  credited: string;
}

export class ReferralSummaryDto {
  @ApiProperty({
    description: 'Share it: accounts registering with it are linked to you for good',
    example: 'K7QX2MPA',
  })
  referralCode: string;

  @ApiProperty({
    description: 'Accounts registered with the code whose referral took effect (a verified address or a paid top-up)',
    example: 3,
  })
  invitedCount: number;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'All referral credit received, USD', example: '1.25' })
  totalCredited: string;

  @ApiProperty({ type: [InviteeDto], description: `The newest ${INVITEES_LISTED} of the counted invitees` })
  invitees: InviteeDto[];
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
      invitees: summary.invitees.map((invitee) => ({
        email: maskedEmail(invitee.email),
        effectiveAt: invitee.effectiveAt.toISOString(),
        verifiedAt: invitee.verifiedAt?.toISOString() ?? null,
        credited: formatUsd(invitee.credited),
      })),
    };
  }
}
