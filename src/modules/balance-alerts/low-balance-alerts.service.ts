import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { MailQueue } from 'src/modules/mail/mail.queue';
import { DataSource } from 'typeorm';

/**
 * The worker's check after a settlement committed: which of the accounts it charged fell below
 * their alert's threshold while the alert was armed. Never on the request's path.
 */
@Injectable()
export class LowBalanceAlerts {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly mail: MailQueue,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Never throws: a missed alert must not fail the settlement that was already committed. */
  async checkAfterSettlement(accountIds: string[]): Promise<void> {
    if (accountIds.length === 0) {
      return;
    }
    try {
      for (const accountId of await this.latch(accountIds)) {
        await this.mail.sendLowBalanceAlert(accountId).catch(async (error: Error) => {
          // Not enqueued: unlatched, so the account's next settlement tries again.
          await this.unlatch(accountId);
          throw error;
        });
      }
    } catch (error) {
      this.logger.error({ err: (error as Error).message }, 'low-balance alert check failed');
    }
  }

  private async unlatch(accountId: string): Promise<void> {
    await this.dataSource.query('UPDATE balance_alerts SET alert_sent = false WHERE account_id = $1', [accountId]);
  }

  /**
   * Sets the alert's latch of every account below its threshold and returns those it set. One
   * conditional UPDATE: of two settlements checking at once, only one sees the latch unset and
   * returns the account, so exactly one mail goes out.
   */
  private async latch(accountIds: string[]): Promise<string[]> {
    const [rows] = await this.dataSource.query<[{ account_id: string }[], number]>(
      `UPDATE balance_alerts b SET alert_sent = true, updated_at = now()
       FROM accounts a
       WHERE b.account_id = ANY($1::uuid[]) AND a.id = b.account_id AND NOT b.alert_sent AND a.balance < b.threshold
       RETURNING b.account_id`,
      [accountIds],
    );
    return rows.map((row) => row.account_id);
  }
}
