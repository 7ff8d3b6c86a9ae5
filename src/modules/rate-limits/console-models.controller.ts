import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { formatUsd } from 'src/common/money/money';
import { multiplierPpmOf, ONE_MULTIPLIER_PPM, scaledPrice } from 'src/common/money/price-multiplier';
import { AccountGroupsRepository } from 'src/modules/account-groups/account-groups.repository';
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
    private readonly groups: AccountGroupsRepository,
  ) {}

  /**
   * The servable models at this account's own prices (the catalog's times its group's multiplier,
   * to the nano-dollar) and with its own limits on each. One query, for the account's group; the rest is in memory.
   */
  @Get()
  @ApiOkResponse({ type: ConsoleModelListDto })
  async listConsoleModels(@CurrentPrincipal() principal: ConsolePrincipal): Promise<ConsoleModelListDto> {
    const group = await this.groups.findOfAccount(principal.accountId);
    const ppm = group ? multiplierPpmOf(group) : ONE_MULTIPLIER_PPM;
    const price = (nanos: bigint) => formatUsd(scaledPrice(nanos, ppm));
    const models = this.catalog.list().sort((a, b) => a.id.localeCompare(b.id));
    return {
      data: models.map((model) => {
        const { rpm, tpm } = this.policy.limitsFor(principal.accountId, model, group ?? undefined);
        return {
          id: model.id,
          inputPrice: price(model.inputPrice),
          outputPrice: price(model.outputPrice),
          // Without a price of their own, cached prompt tokens are billed as input.
          cachedInputPrice: price(model.cachedInputPrice ?? model.inputPrice),
          cacheWriteInputPrice: price(model.cacheWriteInputPrice ?? model.inputPrice),
          vision: model.vision,
          maxOutputTokens: model.maxOutputTokens,
          rpm,
          tpm,
        };
      }),
    };
  }
}
