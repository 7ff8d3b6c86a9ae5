import { Module } from '@nestjs/common';
import { BalanceAlertsRepository } from 'src/modules/balance-alerts/balance-alerts.repository';
import { LowBalanceAlerts } from 'src/modules/balance-alerts/low-balance-alerts.service';
import { MailModule } from 'src/modules/mail/mail.module';

/** The check settlement runs once it committed (the worker's side of low-balance alerts). */
@Module({
  imports: [MailModule],
  providers: [LowBalanceAlerts, BalanceAlertsRepository],
  exports: [LowBalanceAlerts],
})
export class BalanceAlertsWorkerModule {}
