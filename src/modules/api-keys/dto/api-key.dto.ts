import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsISO8601,
  IsOptional,
  IsString,
  Length,
  Matches,
} from 'class-validator';
import { ApiMoney } from 'src/common/openapi/money-property';
import { API_KEY_STATUSES, ApiKeyStatus, KEY_DISABLERS, KeyDisabler } from 'src/modules/api-keys/api-key.entity';

/** A positive USD amount of at most $1,000,000 (bounds checked by the service, which names the field). */
const SPEND_LIMIT = /^\d{1,7}(\.\d{1,9})?$/;
export const MAX_ALLOWED_MODELS = 100;

/** The controls a key may carry; on PATCH an absent field stays, null clears it. */
class ApiKeyControlsDto {
  @ApiPropertyOptional({
    description: 'ISO time after which the key is refused (403 api_key_expired); must be in the future. null: never.',
    example: '2027-01-01T00:00:00Z',
    format: 'date-time',
    nullable: true,
    type: String,
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 time' })
  expiresAt?: string | null;

  @ApiPropertyOptional({
    description: 'The only model ids the key may use (403 model_not_permitted for others). null: every model.',
    example: ['gpt-4o-mini'],
    nullable: true,
    type: [String],
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ALLOWED_MODELS)
  @IsString({ each: true })
  allowedModels?: string[] | null;

  @ApiPropertyOptional({
    description:
      'USD the key may spend over its life, over $0 and at most $1,000,000 (403 key_spend_limit_reached). null: no limit.',
    example: '25',
    nullable: true,
    type: String,
    pattern: SPEND_LIMIT.source,
  })
  @IsOptional()
  @Matches(SPEND_LIMIT, { message: 'spendLimit must be a decimal string in USD, at most 9 decimals' })
  spendLimit?: string | null;
}

export class ApiKeyCreateDto extends ApiKeyControlsDto {
  @ApiProperty({ description: 'A label for the key', example: 'production', minLength: 1, maxLength: 100 })
  @IsString()
  @Length(1, 100)
  name: string;
}

export enum ApiKeySettableStatus {
  Enabled = 'enabled',
  Disabled = 'disabled',
}

export class ApiKeyUpdateDto extends ApiKeyControlsDto {
  @ApiPropertyOptional({ description: 'A new label', example: 'ci', minLength: 1, maxLength: 100 })
  @IsOptional()
  @IsString()
  @Length(1, 100)
  name?: string;

  @ApiPropertyOptional({ enum: ApiKeySettableStatus, enumName: 'ApiKeySettableStatus', example: 'disabled' })
  @IsOptional()
  @IsIn(['enabled', 'disabled'])
  status?: 'enabled' | 'disabled';
}

export class ApiKeyResponseDto {
  @ApiProperty({ format: 'uuid', example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c' })
  id: string;

  @ApiProperty({ example: 'production' })
  name: string;

  @ApiProperty({ enum: API_KEY_STATUSES, enumName: 'ApiKeyStatus', example: 'enabled' })
  status: ApiKeyStatus;

  @ApiProperty({
    description:
      'Who disabled the key, while it is disabled: `owner` (enable it again in the console) or `operator` (only an operator can enable it; the console answers 409 key_disabled_by_operator). null otherwise',
    enum: KEY_DISABLERS,
    enumName: 'KeyDisabler',
    nullable: true,
    example: null,
  })
  disabledBy: KeyDisabler | null;

  @ApiProperty({ description: 'The first characters of the key, the rest masked', example: 'sk-AbCd********' })
  maskedKey: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T08:30:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: '2026-11-22T10:00:00.000Z' })
  lastUsedAt: string | null;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  expiresAt: string | null;

  @ApiProperty({ nullable: true, type: [String], example: ['gpt-4o-mini'] })
  allowedModels: string[] | null;

  @ApiMoney({ description: 'USD the key may spend over its life; null: no limit', example: '25', nullable: true })
  spendLimit: string | null;

  @ApiMoney({ description: 'USD charged through this key so far (settled usage)', example: '3.0125' })
  spent: string;
}

export class ApiKeyCreatedResponseDto extends ApiKeyResponseDto {
  @ApiProperty({ description: 'The secret key. Shown this once; only its hash is stored.', example: 'sk-…' })
  key: string;
}

export class ApiKeyListResponseDto {
  @ApiProperty({ type: [ApiKeyResponseDto] })
  data: ApiKeyResponseDto[];
}
