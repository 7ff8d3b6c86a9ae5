import { Module } from '@nestjs/common';
import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { PaymentsCoreModule } from 'src/modules/payments/payments.module';
import { PaymentsProcessor } from 'src/modules/payments/payments.processor';
import { ReconciliationService } from 'src/modules/payments/reconciliation.service';

/** The payment-confirmation worker: notifications handed over by the API, the poller, and the expiry sweep. */
@Module({
  // The queue is registered here too: BullMQ attaches a module's processors to the queues it registers.
  imports: [PaymentsCoreModule, registerQueue(QueueName.Payments)],
  providers: [PaymentsProcessor, ReconciliationService],
})
export class PaymentsWorkerModule {}
