import { Module } from '@nestjs/common';
import { LedgerModule } from 'src/modules/ledger/ledger.module';
import { ReferralsController } from 'src/modules/referrals/referrals.controller';
import { ReferralsRepository } from 'src/modules/referrals/referrals.repository';
import { ReferralsService } from 'src/modules/referrals/referrals.service';

/** Referral codes are issued at registration (AuthService); credits are paid by settlement. */
@Module({
  imports: [LedgerModule],
  controllers: [ReferralsController],
  providers: [ReferralsRepository, ReferralsService],
})
export class ReferralsModule {}
