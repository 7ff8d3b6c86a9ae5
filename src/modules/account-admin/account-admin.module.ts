import { Module } from '@nestjs/common';
import { AccountGroupsAdminService } from 'src/modules/account-admin/account-groups-admin.service';
import { AccountAdminService } from 'src/modules/account-admin/account-admin.service';
import { AdminAccountGroupsController } from 'src/modules/account-admin/admin-account-groups.controller';
import { AccountGroupsModule } from 'src/modules/account-groups/account-groups.module';
import { AdminAccountDetailController } from 'src/modules/account-admin/admin-account-detail.controller';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { ApiKeysModule } from 'src/modules/api-keys/api-keys.module';
import { LedgerModule } from 'src/modules/ledger/ledger.module';
import { PaymentsModule } from 'src/modules/payments/payments.module';
import { UsageModule } from 'src/modules/usage/usage.module';

/** The operator's view of an account (money, keys, what runs now), its suspension, and account groups. */
@Module({
  imports: [AccountsModule, AccountGroupsModule, ApiKeysModule, LedgerModule, UsageModule, PaymentsModule],
  controllers: [AdminAccountDetailController, AdminAccountGroupsController],
  providers: [AccountAdminService, AccountGroupsAdminService],
})
export class AccountAdminModule {}
