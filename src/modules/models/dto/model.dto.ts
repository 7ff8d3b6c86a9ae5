import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { formatUsd } from 'src/common/money/money';
import { ApiMoney, MONEY_PATTERN } from 'src/common/openapi/money-property';
import { ModelRouteEntity } from 'src/modules/models/model-route.entity';
import { MODEL_KINDS, ModelEntity, ModelKind } from 'src/modules/models/model.entity';

// Up to $1,000,000 per million tokens: far above any real price, and no overflow in cost arithmetic.
const PRICE = /^\d{1,7}(\.\d{1,9})?$/;
const PRICE_MESSAGE = 'must be a non-negative decimal string in USD per million tokens, at most 9 decimals';

export class ModelRouteDto {
  @ApiProperty({ example: 'openai-main' })
  @IsString()
  @Length(1, 128)
  channelId: string;

  @ApiProperty({ description: "The model's name at that upstream", example: 'gpt-4o-2024-08-06' })
  @IsString()
  @Length(1, 256)
  upstreamModel: string;

  @ApiPropertyOptional({
    description:
      'What the upstream charges per one million prompt tokens through this route (USD), for the margin report. ' +
      'Set it together with costOutputPrice; absent or null: the cost of this route is unknown.',
    type: String,
    example: '2',
    pattern: PRICE.source,
    nullable: true,
  })
  @IsOptional()
  @Matches(PRICE, { message: `costInputPrice ${PRICE_MESSAGE}` })
  costInputPrice?: string | null;

  @ApiPropertyOptional({
    description: 'What the upstream charges per one million completion tokens (USD)',
    type: String,
    example: '8',
    pattern: PRICE.source,
    nullable: true,
  })
  @IsOptional()
  @Matches(PRICE, { message: `costOutputPrice ${PRICE_MESSAGE}` })
  costOutputPrice?: string | null;

  @ApiPropertyOptional({
    description: 'Per one million prompt tokens read from the cache (USD); absent or null: costInputPrice',
    type: String,
    example: '1',
    pattern: PRICE.source,
    nullable: true,
  })
  @IsOptional()
  @Matches(PRICE, { message: `costCachedInputPrice ${PRICE_MESSAGE}` })
  costCachedInputPrice?: string | null;

  @ApiPropertyOptional({
    description: 'Per one million prompt tokens written to the cache (USD); absent or null: costInputPrice',
    type: String,
    example: '2.5',
    pattern: PRICE.source,
    nullable: true,
  })
  @IsOptional()
  @Matches(PRICE, { message: `costCacheWriteInputPrice ${PRICE_MESSAGE}` })
  costCacheWriteInputPrice?: string | null;
}

export class ModelRouteResponseDto {
  @ApiProperty({ example: 'openai-main' })
  channelId: string;

  @ApiProperty({ example: 'gpt-4o-2024-08-06' })
  upstreamModel: string;

  @ApiMoney({
    nullable: true,
    example: '2',
    description: "The upstream's price per million prompt tokens; null: unknown",
  })
  costInputPrice: string | null;

  @ApiMoney({ nullable: true, example: '8', description: 'Per million completion tokens; null: unknown' })
  costOutputPrice: string | null;

  @ApiMoney({ nullable: true, example: '1', description: 'Per million cached prompt tokens; null: costInputPrice' })
  costCachedInputPrice: string | null;

  @ApiMoney({ nullable: true, example: '2.5', description: 'Per million cache writes; null: costInputPrice' })
  costCacheWriteInputPrice: string | null;

  static from(route: ModelRouteEntity): ModelRouteResponseDto {
    const price = (value: bigint | null) => (value === null ? null : formatUsd(value));
    return {
      channelId: route.channelId,
      upstreamModel: route.upstreamModel,
      costInputPrice: price(route.costInputPrice),
      costOutputPrice: price(route.costOutputPrice),
      costCachedInputPrice: price(route.costCachedInputPrice),
      costCacheWriteInputPrice: price(route.costCacheWriteInputPrice),
    };
  }
}

export class ModelUpsertDto {
  @ApiProperty({ description: 'USD per one million prompt tokens', example: '2.5', pattern: PRICE.source })
  @Matches(PRICE, { message: `inputPrice ${PRICE_MESSAGE}` })
  inputPrice: string;

  @ApiProperty({ description: 'USD per one million completion tokens', example: '10', pattern: PRICE.source })
  @Matches(PRICE, { message: `outputPrice ${PRICE_MESSAGE}` })
  outputPrice: string;

  @ApiPropertyOptional({
    description:
      'USD per one million prompt tokens the upstream read from its cache (`prompt_tokens_details.cached_tokens`). ' +
      'Absent or null: they cost inputPrice.',
    type: String,
    example: '1.25',
    pattern: PRICE.source,
    nullable: true,
  })
  @IsOptional()
  @Matches(PRICE, { message: `cachedInputPrice ${PRICE_MESSAGE}` })
  cachedInputPrice?: string | null;

  @ApiPropertyOptional({
    description:
      "USD per one million prompt tokens the upstream wrote to its cache (Anthropic's cache_creation_input_tokens). " +
      'Absent or null: they cost inputPrice. Admission holds every prompt token at the dearest prompt price.',
    type: String,
    example: '3.125',
    pattern: PRICE.source,
    nullable: true,
  })
  @IsOptional()
  @Matches(PRICE, { message: `cacheWriteInputPrice ${PRICE_MESSAGE}` })
  cacheWriteInputPrice?: string | null;

  @ApiProperty({ example: 16384, minimum: 1 })
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  maxOutputTokens: number;

  @ApiPropertyOptional({ example: true, description: 'Accepts image input', default: false })
  @IsOptional()
  @IsBoolean()
  vision: boolean = false;

  @ApiPropertyOptional({
    enumName: 'ModelKind',
    enum: MODEL_KINDS,
    default: 'chat',
    example: 'chat',
    description:
      'What the model serves: `chat` answers POST /v1/chat/completions, `embedding` answers POST /v1/embeddings ' +
      '(billed at inputPrice only), `completion` answers the legacy POST /v1/completions (through its OpenAI-type ' +
      'routes only). A request to another route is a 400 naming `model`.',
  })
  @IsOptional()
  @IsIn(MODEL_KINDS, { message: `kind must be one of: ${MODEL_KINDS.join(', ')}` })
  kind: ModelKind = 'chat';

  @ApiProperty({ description: 'Requests per minute, per account', example: 60, minimum: 1 })
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  rpm: number;

  @ApiProperty({ description: 'Tokens per minute, per account', example: 100000, minimum: 1 })
  @IsInt()
  @Min(1)
  @Max(2_000_000_000)
  tpm: number;

  @ApiPropertyOptional({ example: true, default: true })
  @IsOptional()
  @IsBoolean()
  enabled: boolean = true;

  @ApiProperty({ type: [ModelRouteDto], description: 'Ways to serve the model; tried by channel priority' })
  @IsArray()
  @ArrayMaxSize(32)
  @ValidateNested({ each: true })
  @Type(() => ModelRouteDto)
  routes: ModelRouteDto[];
}

export class ModelResponseDto {
  @ApiProperty({ example: 'gpt-4o' })
  id: string;

  @ApiProperty({ pattern: MONEY_PATTERN, example: '2.5' })
  inputPrice: string;

  @ApiProperty({ pattern: MONEY_PATTERN, example: '10' })
  outputPrice: string;

  @ApiMoney({ nullable: true, example: '1.25', description: 'null: cached tokens cost inputPrice' })
  cachedInputPrice: string | null;

  @ApiMoney({ nullable: true, example: '3.125', description: 'null: cache writes cost inputPrice' })
  cacheWriteInputPrice: string | null;

  @ApiProperty({ example: 16384 })
  maxOutputTokens: number;

  @ApiProperty({ example: true })
  vision: boolean;

  @ApiProperty({ enumName: 'ModelKind', enum: MODEL_KINDS, example: 'chat' })
  kind: ModelKind;

  @ApiProperty({ example: 60 })
  rpm: number;

  @ApiProperty({ example: 100000 })
  tpm: number;

  @ApiProperty({ example: true })
  enabled: boolean;

  @ApiProperty({ type: [ModelRouteResponseDto] })
  routes: ModelRouteResponseDto[];

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  createdAt: string;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  updatedAt: string;

  static from(model: ModelEntity): ModelResponseDto {
    return {
      id: model.id,
      inputPrice: formatUsd(model.inputPrice),
      outputPrice: formatUsd(model.outputPrice),
      cachedInputPrice: model.cachedInputPrice === null ? null : formatUsd(model.cachedInputPrice),
      cacheWriteInputPrice: model.cacheWriteInputPrice === null ? null : formatUsd(model.cacheWriteInputPrice),
      maxOutputTokens: model.maxOutputTokens,
      vision: model.vision,
      kind: model.kind,
      rpm: model.rpm,
      tpm: model.tpm,
      enabled: model.enabled,
      routes: [...(model.routes ?? [])]
        .sort((a, b) => a.position - b.position)
        .map((route) => ModelRouteResponseDto.from(route)),
      createdAt: model.createdAt.toISOString(),
      updatedAt: model.updatedAt.toISOString(),
    };
  }
}

export class ModelListResponseDto {
  @ApiProperty({ type: [ModelResponseDto] })
  data: ModelResponseDto[];
}

export class PublicModelDto {
  @ApiProperty({ example: 'gpt-4o' })
  id: string;

  @ApiProperty({ example: 'model', enumName: 'ModelObject', enum: ['model'] })
  object: 'model';

  @ApiProperty({ description: 'Unix time (seconds) the model was added', example: 1732147200 })
  created: number;

  @ApiProperty({ example: 'openai' })
  owned_by: string;
}

export class PublicModelListDto {
  @ApiProperty({ example: 'list', enumName: 'ListObject', enum: ['list'] })
  object: 'list';

  @ApiProperty({ type: [PublicModelDto] })
  data: PublicModelDto[];
}
