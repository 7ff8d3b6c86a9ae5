import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { modelIdParam } from 'src/common/http/params';
import { ModelListResponseDto, ModelResponseDto, ModelUpsertDto } from 'src/modules/models/dto/model.dto';
import { ModelsService } from 'src/modules/models/models.service';

@ApiTags('admin')
@AdminAuth()
@Controller('admin/models')
export class AdminModelsController {
  constructor(private readonly service: ModelsService) {}

  @Permission('catalog:write')
  @Put(':modelId')
  @ApiOkResponse({ type: ModelResponseDto })
  upsertModel(
    @Param('modelId', modelIdParam()) modelId: string,
    @Body() dto: ModelUpsertDto,
  ): Promise<ModelResponseDto> {
    return this.service.upsert(modelId, dto);
  }

  @Permission('read')
  @Get()
  @ApiOkResponse({ type: ModelListResponseDto })
  async listModels(): Promise<ModelListResponseDto> {
    return { data: await this.service.list() };
  }

  @Permission('catalog:write')
  @Delete(':modelId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted with its routes; 404 when unknown' })
  deleteModel(@Param('modelId', modelIdParam()) modelId: string): Promise<void> {
    return this.service.delete(modelId);
  }
}
