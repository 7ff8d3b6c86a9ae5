import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

@Injectable()
export class ReferralsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async summary(accountId: string): Promise<{ referralCode: string; invited: number; credited: bigint } | null> {
    const rows = await this.dataSource.query<{ referral_code: string; invited: string; credited: string }[]>(
      `SELECT a.referral_code,
              (SELECT COUNT(*) FROM accounts i WHERE i.referred_by = a.id) AS invited,
              (SELECT COALESCE(SUM(l.amount), 0) FROM ledger_entries l
                 WHERE l.account_id = a.id AND l.kind = 'referral_credit') AS credited
       FROM accounts a WHERE a.id = $1`,
      [accountId],
    );
    return rows[0]
      ? { referralCode: rows[0].referral_code, invited: Number(rows[0].invited), credited: BigInt(rows[0].credited) }
      : null;
  }
}
