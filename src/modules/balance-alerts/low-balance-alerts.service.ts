import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { BalanceAlertsRepository } from 'src/modules/balance-alerts/balance-alerts.repository';
import { MailQueue } from 'src/modules/mail/mail.queue';

/**
 * The worker's check after a settlement committed: which of the accounts it charged fell below
 * their alert's threshold while the alert was armed. Never on the request's path.
 */
@Injectable()
export class LowBalanceAlerts {
  constructor(
    private readonly alerts: BalanceAlertsRepository,
    private readonly mail: MailQueue,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Never throws: a missed alert must not fail the settlement that was already committed. */
  async checkAfterSettlement(accountIds: string[]): Promise<void> {
    if (accountIds.length === 0) {
      return;
    }
    try {
      for (const accountId of await this.alerts.latchBelowThreshold(accountIds)) {
        await this.mail.sendLowBalanceAlert(accountId).catch(async (error: Error) => {
          // Not enqueued: unlatched, so the account's next settlement tries again.
          await this.alerts.unlatch(accountId);
          throw error;
        });
      }
    } catch (error) {
      this.logger.error({ err: (error as Error).message }, 'low-balance alert check failed');
    }
  }
}
