import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface Invitee {
  email: string;
  verifiedAt: Date;
  /** Nano-dollars of referral credit the invitee's usage brought. */
  credited: bigint;
}

/** The newest invitees listed; the count covers all of them. */
export const INVITEES_LISTED = 100;

@Injectable()
export class ReferralsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The account's referral code and how many accounts registered with it and verified their address
   * (a referral takes effect only then); null without the account.
   */
  async invitations(accountId: string): Promise<{ referralCode: string; invited: number } | null> {
    const rows = await this.dataSource.query<{ referral_code: string; invited: string }[]>(
      `SELECT a.referral_code,
              (SELECT COUNT(*) FROM accounts i WHERE i.referred_by = a.id AND i.email_verified_at IS NOT NULL) AS invited
       FROM accounts a WHERE a.id = $1`,
      [accountId],
    );
    return rows[0] ? { referralCode: rows[0].referral_code, invited: Number(rows[0].invited) } : null;
  }

  /**
   * The verified invitees, newest first, each with the credit its usage brought: a referral credit's
   * reference is the request id of the usage that paid it, whose record names the invitee.
   */
  async invitees(accountId: string): Promise<Invitee[]> {
    const rows = await this.dataSource.query<{ email: string; email_verified_at: Date; credited: string }[]>(
      `WITH credits AS (
         SELECT u.account_id, SUM(e.amount) AS credited
         FROM ledger_entries e JOIN usage_records u ON u.request_id = e.reference
         WHERE e.account_id = $1 AND e.kind = 'referral_credit'
         GROUP BY u.account_id
       )
       SELECT i.email, i.email_verified_at, COALESCE(c.credited, 0) AS credited
       FROM accounts i LEFT JOIN credits c ON c.account_id = i.id
       WHERE i.referred_by = $1 AND i.email_verified_at IS NOT NULL
       ORDER BY i.email_verified_at DESC, i.id
       LIMIT $2`,
      [accountId, INVITEES_LISTED],
    );
    return rows.map((row) => ({ email: row.email, verifiedAt: row.email_verified_at, credited: BigInt(row.credited) }));
  }
}
