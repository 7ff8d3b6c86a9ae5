import { Injectable } from '@nestjs/common';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';
import { ReferralsRepository } from 'src/modules/referrals/referrals.repository';

/** An account's referrals: who registered with its code (accounts), and what their usage paid it (the ledger). */
@Injectable()
export class ReferralsService {
  constructor(
    private readonly repository: ReferralsRepository,
    private readonly ledger: LedgerRepository,
  ) {}

  async summary(accountId: string): Promise<{ referralCode: string; invited: number; credited: bigint } | null> {
    const invitations = await this.repository.invitations(accountId);
    return invitations && { ...invitations, credited: await this.ledger.total(accountId, 'referral_credit') };
  }
}
