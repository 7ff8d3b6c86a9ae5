import { Module } from '@nestjs/common';
import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { BalanceAlertsWorkerModule } from 'src/modules/balance-alerts/balance-alerts-worker.module';
import { BalanceResyncService } from 'src/modules/billing/balance-resync.service';
import { BillingProcessor } from 'src/modules/billing/billing.processor';
import { KeySpendRepository } from 'src/modules/billing/key-spend.repository';
import { HoldSweeperService } from 'src/modules/billing/hold-sweeper.service';
import { SettlementBatchService } from 'src/modules/billing/settlement-batch.service';
import { SettlementRepository } from 'src/modules/billing/settlement.repository';
import { SettlementService } from 'src/modules/billing/settlement.service';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { LedgerModule } from 'src/modules/ledger/ledger.module';

/** Billing as the worker runs it: settlement, the hold sweeper and the Redis balance resync. */
@Module({
  imports: [registerQueue(QueueName.Billing), LedgerModule, BalanceAlertsWorkerModule],
  providers: [
    BillingProcessor,
    SettlementService,
    SettlementBatchService,
    SettlementRepository,
    KeySpendRepository,
    UsageQueueService,
    HoldSweeperService,
    BalanceResyncService,
  ],
  exports: [SettlementService, HoldSweeperService, UsageQueueService],
})
export class BillingWorkerModule {}
