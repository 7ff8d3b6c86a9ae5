import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth, ApiKeyPrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { PublicModelListDto } from 'src/modules/models/dto/model.dto';
import { CatalogService } from 'src/modules/models/catalog.service';

@ApiTags('v1')
@ApiKeyAuth()
@Controller('v1/models')
export class ModelsController {
  constructor(private readonly catalog: CatalogService) {}

  @Get()
  @ApiOkResponse({ type: PublicModelListDto })
  listPublicModels(@CurrentPrincipal() principal: ApiKeyPrincipal): PublicModelListDto {
    // A key limited to some models sees only those.
    const allowed = principal.allowedModels;
    return {
      object: 'list',
      data: this.catalog
        .list()
        .filter((model) => !allowed || allowed.has(model.id))
        .map((model) => ({ id: model.id, object: 'model', created: model.created, owned_by: model.ownedBy })),
    };
  }
}
