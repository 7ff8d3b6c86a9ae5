import { Module } from '@nestjs/common';
import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { AccountTokensRepository } from 'src/modules/mail/account-tokens.repository';
import { MailQueue } from 'src/modules/mail/mail.queue';

/**
 * Enqueuing mail, for any module of either process (the worker's MailWorkerModule sends it), and the
 * single-use tokens mails carry: minted by the worker as it sends, consumed by the API.
 */
@Module({
  imports: [registerQueue(QueueName.Mail)],
  providers: [MailQueue, AccountTokensRepository],
  exports: [MailQueue, AccountTokensRepository],
})
export class MailModule {}
