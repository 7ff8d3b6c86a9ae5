import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountGroupEntity } from 'src/modules/account-groups/account-group.entity';
import { AccountGroupsRepository } from 'src/modules/account-groups/account-groups.repository';

/**
 * Account groups: a price multiplier on what their accounts pay and optional default limits. The
 * terms reach requests with each key (api-keys reads them); operators manage them in account-admin.
 */
@Module({
  imports: [TypeOrmModule.forFeature([AccountGroupEntity])],
  providers: [AccountGroupsRepository],
  exports: [AccountGroupsRepository],
})
export class AccountGroupsModule {}
