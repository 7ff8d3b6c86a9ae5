import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { modelIdOrWildcardParam, uuidParam } from 'src/common/http/params';
import { RateLimitListDto, RateLimitResponseDto, RateLimitUpsertDto } from 'src/modules/rate-limits/dto/rate-limit.dto';
import { RateLimitsService } from 'src/modules/rate-limits/rate-limits.service';

@ApiTags('admin')
@AdminAuth()
@Controller('admin/accounts/:accountId/rate-limits')
export class AdminRateLimitsController {
  constructor(private readonly service: RateLimitsService) {}

  /** Overrides an account's limits on one model (`*`: every model without its own override). */
  @Permission('access:write')
  @Put(':modelId')
  @ApiOkResponse({ type: RateLimitResponseDto })
  upsertRateLimit(
    @Param('accountId', uuidParam('accountId')) accountId: string,
    @Param('modelId', modelIdOrWildcardParam()) modelId: string,
    @Body() dto: RateLimitUpsertDto,
  ): Promise<RateLimitResponseDto> {
    return this.service.upsert(accountId, modelId, dto);
  }

  @Permission('read')
  @Get()
  @ApiOkResponse({ type: RateLimitListDto })
  async listRateLimits(@Param('accountId', uuidParam('accountId')) accountId: string): Promise<RateLimitListDto> {
    return { data: await this.service.list(accountId) };
  }

  @Permission('access:write')
  @Delete(':modelId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: "The override is gone; the model's defaults apply again." })
  deleteRateLimit(
    @Param('accountId', uuidParam('accountId')) accountId: string,
    @Param('modelId', modelIdOrWildcardParam()) modelId: string,
  ): Promise<void> {
    return this.service.delete(accountId, modelId);
  }
}
