import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import { inJob } from 'src/common/logging/job-context';
import { Job } from 'bullmq';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { MailJob, MailJobPayloads, QueueName } from 'src/common/queue/queue.constants';
import { MailComposer } from 'src/modules/mail/mail-composer';
import { MailTransport } from 'src/modules/mail/mail-transport';

/**
 * Sends mail; registered only in the worker process. A try that fails throws, and BullMQ tries the
 * job again after its backoff (MailQueue). Logs name the job and the account at most: never the
 * address, the mail's text or its token.
 */
@Processor(QueueName.Mail, { concurrency: 4 })
export class MailProcessor extends WorkerHost {
  constructor(
    private readonly composer: MailComposer,
    private readonly transport: MailTransport,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    super();
  }

  /** Every line logged while the job runs carries its name and id. */
  process(job: Job<MailJobPayloads[MailJob], unknown, string>): Promise<string> {
    return inJob(job, () => this.run(job));
  }

  private async run(job: Job<MailJobPayloads[MailJob], unknown, string>): Promise<string> {
    const name = job.name as MailJob;
    if (!this.transport.enabled) {
      // Documented: without SMTP_URL, mail is off and verification is not required (mail-config.ts).
      metrics.mails.inc({ kind: name, outcome: 'dropped' });
      this.logger.warn({ job: name, jobId: job.id }, 'mail is disabled (no SMTP_URL): mail dropped');
      return 'dropped';
    }
    const outgoing = await this.composer.compose(name, job.data);
    if (!outgoing) {
      return 'nothing to send';
    }
    try {
      await this.transport.send(outgoing.message);
    } catch (error) {
      await outgoing.discard().catch(() => undefined);
      throw error;
    }
    metrics.mails.inc({ kind: name, outcome: 'sent' });
    return 'sent';
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    const attempts = job?.opts.attempts ?? 1;
    const final = (job?.attemptsMade ?? attempts) >= attempts;
    metrics.mails.inc({ kind: job?.name ?? 'unknown', outcome: final ? 'failed' : 'retried' });
    // nodemailer's messages may quote the recipient; its codes say what failed without it.
    const { code, responseCode } = error as Error & { code?: string; responseCode?: number };
    const fields = { job: job?.name, jobId: job?.id, attempts: job?.attemptsMade, code, responseCode };
    if (final) {
      this.logger.error(fields, 'mail not sent: every try failed');
    } else {
      this.logger.warn(fields, 'mail not sent; trying again after the backoff');
    }
  }
}
