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
}
