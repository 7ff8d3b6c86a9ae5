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
import { AdminPriceBooksController } from 'src/modules/models/price-book/admin-price-books.controller';
import { PriceBooksService } from 'src/modules/models/price-book/price-book.service';

@Module({
  imports: [TypeOrmModule.forFeature([ModelEntity, ModelRouteEntity]), ChannelsModule],
  controllers: [ModelsController, AdminModelsController, AdminPriceBooksController],
  providers: [ModelsRepository, ModelsService, PriceBooksService, CatalogService],
  exports: [CatalogService],
})
export class ModelsModule {}
