import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** What the composer reads to address a mail, as the account stands when the worker sends it. */
@Injectable()
export class MailRecipientsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The address of an account still to verify it; null once verified (or no such account). */
  async unverifiedAddress(accountId: string): Promise<string | null> {
    const [account] = await this.dataSource.query<{ email: string }[]>(
      'SELECT email FROM accounts WHERE id = $1 AND email_verified_at IS NULL',
      [accountId],
    );
    return account?.email ?? null;
  }

  /** The account that uses `email` (as typed: trimmed and lower-cased here), or null. */
  async accountByEmail(email: string): Promise<{ id: string; email: string } | null> {
    const [account] = await this.dataSource.query<{ id: string; email: string }[]>(
      'SELECT id, email FROM accounts WHERE email = $1',
      [email.trim().toLowerCase()],
    );
    return account ?? null;
  }

  /** The latched alert of an account still below its threshold; null when re-armed or topped up since. */
  async lowBalanceAlert(accountId: string): Promise<{ email: string; balance: bigint; threshold: bigint } | null> {
    const [row] = await this.dataSource.query<{ email: string; balance: string; threshold: string }[]>(
      `SELECT a.email, a.balance, b.threshold FROM accounts a JOIN balance_alerts b ON b.account_id = a.id
       WHERE a.id = $1 AND b.alert_sent AND a.balance < b.threshold`,
      [accountId],
    );
    return row ? { email: row.email, balance: BigInt(row.balance), threshold: BigInt(row.threshold) } : null;
  }
}
