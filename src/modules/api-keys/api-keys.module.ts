import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { ApiKeyEntity } from 'src/modules/api-keys/api-key.entity';
import { AdminKeysController } from 'src/modules/api-keys/admin-keys.controller';
import { ApiKeysController } from 'src/modules/api-keys/api-keys.controller';
import { ApiKeysRepository } from 'src/modules/api-keys/api-keys.repository';
import { ApiKeysService } from 'src/modules/api-keys/api-keys.service';
import { ModelsModule } from 'src/modules/models/models.module';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKeyEntity]), ModelsModule],
  controllers: [ApiKeysController, AdminKeysController],
  providers: [ApiKeysRepository, ApiKeysService, ApiKeyAuthenticator],
  exports: [ApiKeyAuthenticator, ApiKeysRepository, ApiKeysService],
})
export class ApiKeysModule {}
