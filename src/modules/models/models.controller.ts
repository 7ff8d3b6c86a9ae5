import { Controller, Get, Param } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOkResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth, ApiKeyPrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { PublicModelDto, PublicModelListDto } from 'src/modules/models/dto/model.dto';
import { CatalogModel, CatalogService } from 'src/modules/models/catalog.service';

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
        .map(publicModel),
    };
  }

  /** OpenAI's `models.retrieve`: the same object as one entry of the list. */
  @Get(':model')
  @ApiParam({ name: 'model', type: String, description: 'A model id from the model list', example: 'gpt-4o' })
  @ApiOkResponse({ type: PublicModelDto })
  @ApiNotFoundResponse({ description: 'No servable model with that id: code `model_not_found`' })
  retrievePublicModel(@Param('model') modelId: string, @CurrentPrincipal() principal: ApiKeyPrincipal): PublicModelDto {
    const model = this.catalog.get(modelId);
    // A disabled model, or one without an enabled route, is left out of the catalog; a model the key
    // may not use is not in its list either: the same 404.
    if (!model || (principal.allowedModels && !principal.allowedModels.has(model.id))) {
      throw new ApiError(
        ErrorKind.NotFound,
        `The model '${modelId}' does not exist or you do not have access to it.`,
        'model',
        'model_not_found',
      );
    }
    return publicModel(model);
  }
}

function publicModel(model: CatalogModel): PublicModelDto {
  return { id: model.id, object: 'model', created: model.created, owned_by: model.ownedBy };
}
