import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { ApiKeyEntity } from 'src/modules/api-keys/api-key.entity';
import { AdminKeysController } from 'src/modules/api-keys/admin-keys.controller';
import { ApiKeysController } from 'src/modules/api-keys/api-keys.controller';
import { ApiKeysRepository } from 'src/modules/api-keys/api-keys.repository';
import { ApiKeysService } from 'src/modules/api-keys/api-keys.service';
import { ModelsModule } from 'src/modules/models/models.module';

@Module({
  // AccountsModule: VerifiedEmailGuard on key creation reads through AccountsRepository.
  imports: [TypeOrmModule.forFeature([ApiKeyEntity]), ModelsModule, AccountsModule],
  controllers: [ApiKeysController, AdminKeysController],
  providers: [ApiKeysRepository, ApiKeysService, ApiKeyAuthenticator],
  exports: [ApiKeyAuthenticator, ApiKeysRepository, ApiKeysService],
})
export class ApiKeysModule {}
