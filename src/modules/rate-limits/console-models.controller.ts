import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { formatUsd } from 'src/common/money/money';
import { CatalogService } from 'src/modules/models/catalog.service';
import { ConsoleModelListDto } from 'src/modules/models/dto/console-model.dto';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';

@ApiTags('console')
@ConsoleAuth()
@Controller('console/models')
export class ConsoleModelsController {
  constructor(
    private readonly catalog: CatalogService,
    private readonly policy: RateLimitPolicy,
  ) {}

  /** The servable models with their prices, and this account's own limits on each (both from memory). */
  @Get()
  @ApiOkResponse({ type: ConsoleModelListDto })
  listConsoleModels(@CurrentPrincipal() principal: ConsolePrincipal): ConsoleModelListDto {
    const models = this.catalog.list().sort((a, b) => a.id.localeCompare(b.id));
    return {
      data: models.map((model) => {
        const { rpm, tpm } = this.policy.limitsFor(principal.accountId, model);
        return {
          id: model.id,
          inputPrice: formatUsd(model.inputPrice),
          outputPrice: formatUsd(model.outputPrice),
          // Without a price of their own, cached prompt tokens are billed as input.
          cachedInputPrice: formatUsd(model.cachedInputPrice ?? model.inputPrice),
          cacheWriteInputPrice: formatUsd(model.cacheWriteInputPrice ?? model.inputPrice),
          vision: model.vision,
          maxOutputTokens: model.maxOutputTokens,
          rpm,
          tpm,
        };
      }),
    };
  }
}
