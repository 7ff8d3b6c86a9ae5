import { Injectable } from '@nestjs/common';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';
import { Invitee, ReferralsRepository } from 'src/modules/referrals/referrals.repository';

export interface ReferralSummary {
  referralCode: string;
  invited: number;
  credited: bigint;
  invitees: Invitee[];
}

/** An account's referrals: who registered with its code (accounts), and what their usage paid it (the ledger). */
@Injectable()
export class ReferralsService {
  constructor(
    private readonly repository: ReferralsRepository,
    private readonly ledger: LedgerRepository,
  ) {}

  async summary(accountId: string): Promise<ReferralSummary | null> {
    const invitations = await this.repository.invitations(accountId);
    if (!invitations) {
      return null;
    }
    const [credited, invitees] = await Promise.all([
      this.ledger.total(accountId, 'referral_credit'),
      this.repository.invitees(accountId),
    ]);
    return { ...invitations, credited, invitees };
  }
}
