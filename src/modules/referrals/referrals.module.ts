import { Module } from '@nestjs/common';
import { ReferralsController } from 'src/modules/referrals/referrals.controller';
import { ReferralsRepository } from 'src/modules/referrals/referrals.repository';

/** Referral codes are issued at registration (AuthService); credits are paid by settlement. */
@Module({
  controllers: [ReferralsController],
  providers: [ReferralsRepository],
})
export class ReferralsModule {}
