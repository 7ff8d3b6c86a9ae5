import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountGroupsModule } from 'src/modules/account-groups/account-groups.module';
import { ChannelsModule } from 'src/modules/channels/channels.module';
import { AdminModelsController } from 'src/modules/models/admin-models.controller';
import { ConsoleModelsController } from 'src/modules/models/console-models.controller';
import { CatalogService } from 'src/modules/models/catalog.service';
import { ModelRouteEntity } from 'src/modules/models/model-route.entity';
import { ModelEntity } from 'src/modules/models/model.entity';
import { ModelsController } from 'src/modules/models/models.controller';
import { ModelsRepository } from 'src/modules/models/models.repository';
import { ModelsService } from 'src/modules/models/models.service';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';

@Module({
  imports: [
    TypeOrmModule.forFeature([ModelEntity, ModelRouteEntity]),
    ChannelsModule,
    RateLimitsModule,
    AccountGroupsModule,
  ],
  controllers: [ModelsController, AdminModelsController, ConsoleModelsController],
  providers: [ModelsRepository, ModelsService, CatalogService],
  exports: [CatalogService],
})
export class ModelsModule {}
