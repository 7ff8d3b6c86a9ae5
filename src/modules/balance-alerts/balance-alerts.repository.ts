import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface BalanceAlertSetting {
  threshold: bigint;
  alertSent: boolean;
}

@Injectable()
export class BalanceAlertsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async find(accountId: string): Promise<BalanceAlertSetting | null> {
    const rows = await this.dataSource.query<{ threshold: string; alert_sent: boolean }[]>(
      'SELECT threshold, alert_sent FROM balance_alerts WHERE account_id = $1',
      [accountId],
    );
    return rows[0] ? { threshold: BigInt(rows[0].threshold), alertSent: rows[0].alert_sent } : null;
  }

  /**
   * Sets the threshold, armed: a new threshold is a new alert, which fires after the next settlement
   * if the balance is below it then.
   */
  async set(accountId: string, threshold: bigint): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO balance_alerts (account_id, threshold, alert_sent) VALUES ($1, $2, false)
       ON CONFLICT (account_id) DO UPDATE SET threshold = EXCLUDED.threshold, alert_sent = false, updated_at = now()`,
      [accountId, threshold.toString()],
    );
  }

  async remove(accountId: string): Promise<void> {
    await this.dataSource.query('DELETE FROM balance_alerts WHERE account_id = $1', [accountId]);
  }

  /**
   * Sets the alert's latch of every account below its threshold and returns those it set. One
   * conditional UPDATE: of two settlements checking at once, only one sees the latch unset and
   * returns the account, so exactly one mail goes out.
   */
  async latchBelowThreshold(accountIds: string[]): Promise<string[]> {
    const [rows] = await this.dataSource.query<[{ account_id: string }[], number]>(
      `UPDATE balance_alerts b SET alert_sent = true, updated_at = now()
       FROM accounts a
       WHERE b.account_id = ANY($1::uuid[]) AND a.id = b.account_id AND NOT b.alert_sent AND a.balance < b.threshold
       RETURNING b.account_id`,
      [accountIds],
    );
    return rows.map((row) => row.account_id);
  }

  /** Re-arms the alert without touching its threshold. */
  async unlatch(accountId: string): Promise<void> {
    await this.dataSource.query('UPDATE balance_alerts SET alert_sent = false WHERE account_id = $1', [accountId]);
  }
}
