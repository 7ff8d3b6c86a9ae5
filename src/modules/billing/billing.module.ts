import { Module } from '@nestjs/common';
import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { BillingQueue } from 'src/modules/billing/billing.queue';
import { KeySpendRepository } from 'src/modules/billing/key-spend.repository';
import { MeteringService } from 'src/modules/billing/metering.service';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { LedgerModule } from 'src/modules/ledger/ledger.module';

/** Billing as the API process needs it: holds and the settlement producer. The consumer is in the worker. */
@Module({
  imports: [registerQueue(QueueName.Billing), AccountsModule, LedgerModule],
  providers: [MeteringService, BillingQueue, UsageQueueService, KeySpendRepository],
  exports: [MeteringService, BillingQueue],
})
export class BillingModule {}
