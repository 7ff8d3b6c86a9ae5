import { Module } from '@nestjs/common';
import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { MailQueue } from 'src/modules/mail/mail.queue';

/** Enqueuing mail, for any module of either process; the worker's MailWorkerModule sends it. */
@Module({
  imports: [registerQueue(QueueName.Mail)],
  providers: [MailQueue],
  exports: [MailQueue],
})
export class MailModule {}
