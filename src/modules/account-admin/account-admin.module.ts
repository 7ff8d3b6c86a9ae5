import { Module } from '@nestjs/common';
import { AccountAdminService } from 'src/modules/account-admin/account-admin.service';
import { AdminAccountDetailController } from 'src/modules/account-admin/admin-account-detail.controller';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { ApiKeysModule } from 'src/modules/api-keys/api-keys.module';
import { LedgerModule } from 'src/modules/ledger/ledger.module';
import { PaymentsModule } from 'src/modules/payments/payments.module';
import { UsageModule } from 'src/modules/usage/usage.module';

/** The operator's view of an account (money, keys, what runs now) and its suspension. */
@Module({
  imports: [AccountsModule, ApiKeysModule, LedgerModule, UsageModule, PaymentsModule],
  controllers: [AdminAccountDetailController],
  providers: [AccountAdminService],
})
export class AccountAdminModule {}
