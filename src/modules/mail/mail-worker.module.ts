import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { Module } from '@nestjs/common';
import { MailComposer } from 'src/modules/mail/mail-composer';
import { MailModule } from 'src/modules/mail/mail.module';
import { MailProcessor } from 'src/modules/mail/mail.processor';
import { MailRecipientsRepository } from 'src/modules/mail/mail-recipients.repository';
import { MailTransport } from 'src/modules/mail/mail-transport';

/** The mail sender, in the worker only. */
@Module({
  // The queue is registered here too: BullMQ attaches a module's processors to the queues it registers.
  imports: [MailModule, registerQueue(QueueName.Mail)],
  providers: [MailProcessor, MailComposer, MailRecipientsRepository, MailTransport],
})
export class MailWorkerModule {}
