import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { referralEffectiveAt } from 'src/modules/accounts/referral-effective';
import { DataSource } from 'typeorm';

export interface Invitee {
  email: string;
  /** When the referral took effect (referral-effective.ts). */
  effectiveAt: Date;
  /** Null: the invitee never verified its address (its first paid top-up made the referral count). */
  verifiedAt: Date | null;
  /** Nano-dollars of referral credit the invitee's usage brought. */
  credited: bigint;
}

const EFFECTIVE_AT = referralEffectiveAt('i');

/** The newest invitees listed; the count covers all of them. */
export const INVITEES_LISTED = 100;

@Injectable()
export class ReferralsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The account's referral code and how many accounts registered with it and had their referral take
   * effect (a verified address or a paid top-up); null without the account.
   */
  async invitations(accountId: string): Promise<{ referralCode: string; invited: number } | null> {
    const rows = await this.dataSource.query<{ referral_code: string; invited: string }[]>(
      `SELECT a.referral_code,
              (SELECT COUNT(*) FROM accounts i WHERE i.referred_by = a.id AND ${EFFECTIVE_AT} IS NOT NULL) AS invited
       FROM accounts a WHERE a.id = $1`,
      [accountId],
    );
    return rows[0] ? { referralCode: rows[0].referral_code, invited: Number(rows[0].invited) } : null;
  }

  /**
   * The invitees whose referral took effect, newest first, each with the credit its usage brought: a referral credit's
   * reference is the request id of the usage that paid it, whose record names the invitee.
   */
  async invitees(accountId: string): Promise<Invitee[]> {
    const rows = await this.dataSource.query<
      { email: string; effective_at: Date; email_verified_at: Date | null; credited: string }[]
    >(
      `WITH credits AS (
         SELECT u.account_id, SUM(e.amount) AS credited
         FROM ledger_entries e JOIN usage_records u ON u.request_id = e.reference
         WHERE e.account_id = $1 AND e.kind = 'referral_credit'
         GROUP BY u.account_id
       )
       SELECT i.email, ${EFFECTIVE_AT} AS effective_at, i.email_verified_at, COALESCE(c.credited, 0) AS credited
       FROM accounts i LEFT JOIN credits c ON c.account_id = i.id
       WHERE i.referred_by = $1 AND ${EFFECTIVE_AT} IS NOT NULL
       ORDER BY effective_at DESC, i.id
       LIMIT $2`,
      [accountId, INVITEES_LISTED],
    );
    return rows.map((row) => ({
      email: row.email,
      effectiveAt: row.effective_at,
      verifiedAt: row.email_verified_at,
      credited: BigInt(row.credited),
    }));
  }
}
