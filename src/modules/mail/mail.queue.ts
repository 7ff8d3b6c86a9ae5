import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { JobsOptions, Queue } from 'bullmq';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { MailJob, MailJobPayloads, QueueName } from 'src/common/queue/queue.constants';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';

/**
 * The one producer of mail jobs, in both processes: nothing sends mail inline. A job is tried
 * MAIL_ATTEMPTS times, waiting MAIL_RETRY_DELAY_MS and twice as long after each failure, so an SMTP
 * server that is down for a while still gets the mail once it is back. Jobs are removed when they end,
 * failed or not: a password reset's job holds an address, which Redis keeps no longer than needed.
 */
@Injectable()
export class MailQueue {
  private readonly options: JobsOptions;

  constructor(
    @InjectQueue(QueueName.Mail) private readonly queue: Queue,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.options = {
      attempts: config.mail.attempts,
      backoff: { type: 'exponential', delay: config.mail.retryDelayMs },
      removeOnComplete: true,
      removeOnFail: true,
    };
  }

  /** Never throws: registration succeeds while Redis is away (the account can ask again later). */
  async sendVerification(accountId: string): Promise<void> {
    await this.add(MailJob.VerifyEmail, { accountId }).catch((error: Error) =>
      this.logger.error({ err: error.message, accountId }, 'could not enqueue the verification mail'),
    );
  }

  /** Throws when Redis is away: the caller answers 503 the same way whatever the address. */
  async sendPasswordReset(email: string): Promise<void> {
    await this.add(MailJob.PasswordReset, { email });
  }

  async sendLowBalanceAlert(accountId: string): Promise<void> {
    await this.add(MailJob.LowBalance, { accountId });
  }

  private async add<K extends MailJob>(name: K, payload: MailJobPayloads[K]): Promise<void> {
    await this.queue.add(name, payload, this.options);
  }
}
