import { Module } from '@nestjs/common';
import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { BalanceResync } from 'src/modules/billing/balance-resync.service';
import { BillingProcessor } from 'src/modules/billing/billing.processor';
import { HoldSweeper } from 'src/modules/billing/hold-sweeper.service';
import { SettlementRepository } from 'src/modules/billing/settlement.repository';
import { SettlementService } from 'src/modules/billing/settlement.service';
import { LedgerModule } from 'src/modules/ledger/ledger.module';

/** Billing as the worker runs it: settlement and the hold sweeper. */
@Module({
  imports: [registerQueue(QueueName.Billing), LedgerModule],
  providers: [BillingProcessor, SettlementService, SettlementRepository, HoldSweeper, BalanceResync],
  exports: [SettlementService, HoldSweeper],
})
export class BillingWorkerModule {}
