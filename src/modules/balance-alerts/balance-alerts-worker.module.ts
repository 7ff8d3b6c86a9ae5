import { Module } from '@nestjs/common';
import { LowBalanceAlerts } from 'src/modules/balance-alerts/low-balance-alerts.service';
import { MailModule } from 'src/modules/mail/mail.module';

/** The check settlement runs once it committed (the worker's side of low-balance alerts). */
@Module({
  imports: [MailModule],
  providers: [LowBalanceAlerts],
  exports: [LowBalanceAlerts],
})
export class BalanceAlertsWorkerModule {}
