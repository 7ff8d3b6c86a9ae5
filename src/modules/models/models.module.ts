import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChannelsModule } from 'src/modules/channels/channels.module';
import { AdminModelsController } from 'src/modules/models/admin-models.controller';
import { CatalogService } from 'src/modules/models/catalog.service';
import { ModelRouteEntity } from 'src/modules/models/model-route.entity';
import { ModelEntity } from 'src/modules/models/model.entity';
import { ModelsController } from 'src/modules/models/models.controller';
import { ModelsRepository } from 'src/modules/models/models.repository';
import { ModelsService } from 'src/modules/models/models.service';

@Module({
  imports: [TypeOrmModule.forFeature([ModelEntity, ModelRouteEntity]), ChannelsModule],
  controllers: [ModelsController, AdminModelsController],
  providers: [ModelsRepository, ModelsService, CatalogService],
  exports: [CatalogService],
})
export class ModelsModule {}
