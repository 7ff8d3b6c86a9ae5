import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { formatUsd } from 'src/common/money/money';
import { ApiMoney } from 'src/common/openapi/money-property';
import {
  ModelPrices,
  PRICE_BOOK_FORMATS,
  PriceBookDiff,
  PriceBookFormat,
  PricedModel,
} from 'src/modules/models/price-book/price-book';

const PRICE_PATTERN = '^\\d{1,7}(\\.\\d{1,9})?$';
const price = (value: bigint | null) => (value === null ? null : formatUsd(value));

export class ModelPricesDto {
  @ApiProperty({ description: 'USD per one million prompt tokens', example: '2.5', pattern: PRICE_PATTERN })
  inputPrice: string;

  @ApiProperty({ description: 'USD per one million completion tokens', example: '10', pattern: PRICE_PATTERN })
  outputPrice: string;

  @ApiMoney({ nullable: true, example: '1.25', description: 'Per million cached prompt tokens; null: inputPrice' })
  cachedInputPrice: string | null;

  @ApiMoney({ nullable: true, example: '3.125', description: 'Per million cache writes; null: inputPrice' })
  cacheWriteInputPrice: string | null;

  static from(prices: ModelPrices): ModelPricesDto {
    return {
      inputPrice: formatUsd(prices.inputPrice),
      outputPrice: formatUsd(prices.outputPrice),
      cachedInputPrice: price(prices.cachedInputPrice),
      cacheWriteInputPrice: price(prices.cacheWriteInputPrice),
    };
  }
}

export class PriceBookEntryDto extends ModelPricesDto {
  @ApiProperty({ example: 'gpt-4o' })
  id: string;

  static fromModel(model: PricedModel): PriceBookEntryDto {
    return { id: model.id, ...ModelPricesDto.from(model) };
  }
}

export class PriceBookDto {
  @ApiProperty({
    type: [PriceBookEntryDto],
    description:
      'Every model of the catalog with its prices, by id. Importing it unchanged changes nothing; in an import the ' +
      'optional prices may be left out (null).',
  })
  models: PriceBookEntryDto[];
}

/** LiteLLM's file shape, for the request body's documentation only (the import reads the number literals itself). */
export class LiteLlmModelCostsDto {
  @ApiProperty({ type: Number, description: 'USD per prompt token', example: 0.0000025 })
  input_cost_per_token: number;

  @ApiProperty({ type: Number, description: 'USD per completion token', example: 0.00001 })
  output_cost_per_token: number;

  @ApiPropertyOptional({ type: Number, description: 'USD per cached prompt token', example: 0.00000125 })
  cache_read_input_token_cost?: number;

  @ApiPropertyOptional({ type: Number, description: 'USD per prompt token written to the cache', example: 0.000003125 })
  cache_creation_input_token_cost?: number;
}

export class PriceChangeDto {
  @ApiProperty({ example: 'gpt-4o' })
  id: string;

  @ApiProperty({ type: ModelPricesDto })
  before: ModelPricesDto;

  @ApiProperty({ type: ModelPricesDto })
  after: ModelPricesDto;
}

export class PriceBookDiffDto {
  @ApiProperty({ description: 'true: nothing was written (dryRun=true)', example: false })
  dryRun: boolean;

  @ApiProperty({ type: [PriceChangeDto], description: 'Models whose prices the book changes (changed, unless dryRun)' })
  changed: PriceChangeDto[];

  @ApiProperty({ description: 'Models in the book whose prices are already these', example: 41 })
  unchanged: number;

  @ApiProperty({
    type: [String],
    description: 'Models in the book that the catalog does not have: skipped, never created',
    example: ['claude-2.1'],
  })
  unknown: string[];

  static from(diff: PriceBookDiff, dryRun: boolean): PriceBookDiffDto {
    return {
      dryRun,
      changed: diff.changed.map((change) => ({
        id: change.id,
        before: ModelPricesDto.from(change.before),
        after: ModelPricesDto.from(change.after),
      })),
      unchanged: diff.unchanged,
      unknown: diff.unknown,
    };
  }
}

export class PriceBookImportQueryDto {
  @ApiPropertyOptional({
    description: 'true: answer the diff and change nothing',
    default: false,
    type: Boolean,
    example: true,
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'dryRun must be true or false' })
  dryRun: boolean = false;

  @ApiPropertyOptional({
    enum: PRICE_BOOK_FORMATS,
    enumName: 'PriceBookFormat',
    default: 'gateway',
    description:
      "`gateway`: this API's own price book (GET /admin/price-books). `litellm`: LiteLLM's " +
      '`model_prices_and_context_window.json` as it is, USD per token',
  })
  @IsOptional()
  @IsIn(PRICE_BOOK_FORMATS, { message: `format must be one of: ${PRICE_BOOK_FORMATS.join(', ')}` })
  format: PriceBookFormat = 'gateway';
}
