import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth } from 'src/common/decorators/auth.decorators';
import { PublicModelListDto } from 'src/modules/models/dto/model.dto';
import { CatalogService } from 'src/modules/models/catalog.service';

@ApiTags('v1')
@ApiKeyAuth()
@Controller('v1/models')
export class ModelsController {
  constructor(private readonly catalog: CatalogService) {}

  @Get()
  listPublicModels(): PublicModelListDto {
    return {
      object: 'list',
      data: this.catalog
        .list()
        .map((model) => ({ id: model.id, object: 'model', created: model.created, owned_by: model.ownedBy })),
    };
  }
}
