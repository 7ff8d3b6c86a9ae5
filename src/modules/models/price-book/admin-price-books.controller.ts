import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import {
  LiteLlmModelCostsDto,
  PriceBookDiffDto,
  PriceBookDto,
  PriceBookImportQueryDto,
} from 'src/modules/models/price-book/price-book.dto';
import { PriceBooksService } from 'src/modules/models/price-book/price-book.service';

@ApiTags('admin')
@AdminAuth()
@ApiExtraModels(PriceBookDto, LiteLlmModelCostsDto)
@Controller('admin/price-books')
export class AdminPriceBooksController {
  constructor(private readonly service: PriceBooksService) {}

  @Permission('read')
  @Get()
  @ApiOkResponse({ type: PriceBookDto, description: "Every model's prices; POST it back and nothing changes" })
  exportPriceBook(): Promise<PriceBookDto> {
    return this.service.export();
  }

  @Permission('catalog:write')
  @Post()
  @HttpCode(200)
  @ApiBody({
    description:
      "format=gateway: a price book as GET answers it. format=litellm: LiteLLM's model_prices_and_context_window.json, " +
      'model name → costs in USD per token, converted exactly from the numbers as written. Models the catalog lacks ' +
      'are listed as unknown and skipped; a cost that is not a whole number of nano-dollars per million tokens is a ' +
      '400 naming the model and field.',
    schema: {
      oneOf: [
        { $ref: getSchemaPath(PriceBookDto) },
        { type: 'object', additionalProperties: { $ref: getSchemaPath(LiteLlmModelCostsDto) } },
      ],
    },
  })
  @ApiOkResponse({
    type: PriceBookDiffDto,
    description: 'What changed (or, with dryRun=true, would change), all in one transaction',
  })
  importPriceBook(@Body() body: unknown, @Query() query: PriceBookImportQueryDto): Promise<PriceBookDiffDto> {
    return this.service.import(body, query.format, query.dryRun);
  }
}
