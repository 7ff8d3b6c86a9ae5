import { Module } from '@nestjs/common';
import { BalanceAlertsController } from 'src/modules/balance-alerts/balance-alerts.controller';
import { BalanceAlertsRepository } from 'src/modules/balance-alerts/balance-alerts.repository';

/** Low-balance alerts as the console sets them; BalanceAlertsWorkerModule is the worker's side. */
@Module({
  controllers: [BalanceAlertsController],
  providers: [BalanceAlertsRepository],
})
export class BalanceAlertsModule {}
