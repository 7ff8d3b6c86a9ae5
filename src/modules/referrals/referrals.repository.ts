import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

@Injectable()
export class ReferralsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The account's referral code and how many accounts registered with it; null without the account. */
  async invitations(accountId: string): Promise<{ referralCode: string; invited: number } | null> {
    const rows = await this.dataSource.query<{ referral_code: string; invited: string }[]>(
      `SELECT a.referral_code, (SELECT COUNT(*) FROM accounts i WHERE i.referred_by = a.id) AS invited
       FROM accounts a WHERE a.id = $1`,
      [accountId],
    );
    return rows[0] ? { referralCode: rows[0].referral_code, invited: Number(rows[0].invited) } : null;
  }
}
