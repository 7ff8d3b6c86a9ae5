import { Module } from '@nestjs/common';
import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { ChainWatchProcessor } from 'src/modules/payments/chain/chain-watch.processor';
import { Erc20Watcher } from 'src/modules/payments/chain/erc20-watcher';
import { Trc20Watcher } from 'src/modules/payments/chain/trc20-watcher';
import { TronGridBudget } from 'src/modules/payments/chain/trongrid-budget';
import { PaymentsCoreModule } from 'src/modules/payments/payments.module';
import { PaymentsProcessor } from 'src/modules/payments/confirmation/payments.processor';
import { ReconciliationService } from 'src/modules/payments/confirmation/reconciliation.service';

/**
 * The payment-confirmation worker: notifications handed over by the API, the poller, the expiry sweep,
 * and the USDT chain watchers.
 */
@Module({
  // The queue is registered here too: BullMQ attaches a module's processors to the queues it registers.
  imports: [PaymentsCoreModule, registerQueue(QueueName.Payments), registerQueue(QueueName.ChainWatch)],
  providers: [
    PaymentsProcessor,
    ReconciliationService,
    ChainWatchProcessor,
    Trc20Watcher,
    TronGridBudget,
    Erc20Watcher,
  ],
})
export class PaymentsWorkerModule {}
