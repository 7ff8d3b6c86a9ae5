import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { AccountsService } from 'src/modules/accounts/accounts.service';
import { AdminAccountsController } from 'src/modules/accounts/admin-accounts.controller';
import { ConsoleAccountController } from 'src/modules/accounts/console-account.controller';
import { LedgerModule } from 'src/modules/ledger/ledger.module';

@Module({
  imports: [TypeOrmModule.forFeature([AccountEntity]), LedgerModule],
  controllers: [ConsoleAccountController, AdminAccountsController],
  providers: [AccountsRepository, AccountsService],
  exports: [AccountsRepository],
})
export class AccountsModule {}
