import { Module } from '@nestjs/common';
import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { BillingQueue } from 'src/modules/billing/billing.queue';
import { KeySpendRepository } from 'src/modules/billing/key-spend.repository';
import { MeteringService } from 'src/modules/billing/metering.service';
import { SettlementBatchService } from 'src/modules/billing/settlement-batch.service';
import { SettlementRepository } from 'src/modules/billing/settlement.repository';
import { UsageFallbackService } from 'src/modules/billing/usage-fallback.service';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { LedgerModule } from 'src/modules/ledger/ledger.module';

/**
 * Billing as the API process needs it: holds, the settlement producer, and settlement's transaction
 * for the usage Redis does not take (UsageFallbackService). The consumer is in the worker.
 */
@Module({
  imports: [registerQueue(QueueName.Billing), AccountsModule, LedgerModule],
  providers: [
    MeteringService,
    BillingQueue,
    UsageQueueService,
    UsageFallbackService,
    SettlementBatchService,
    SettlementRepository,
    KeySpendRepository,
  ],
  exports: [MeteringService, BillingQueue],
})
export class BillingModule {}
