import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID, Matches } from 'class-validator';
import { CursorQueryDto } from 'src/common/http/date-range.dto';
import { API_KEY_STATUSES, ApiKeyStatus } from 'src/modules/api-keys/api-key.entity';
import { ApiKeyResponseDto } from 'src/modules/api-keys/dto/api-key.dto';

export class AdminKeyQueryDto extends CursorQueryDto {
  @ApiPropertyOptional({ format: 'uuid', example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c' })
  @IsOptional()
  @IsUUID('all', { message: 'accountId must be a UUID' })
  accountId?: string;

  @ApiPropertyOptional({
    description: 'The first characters of the key as shown masked (`sk-AbCd`): keys whose shown prefix starts so',
    example: 'sk-AbCd',
    pattern: '^[A-Za-z0-9-]{1,7}$',
  })
  @IsOptional()
  @Matches(/^[A-Za-z0-9-]{1,7}$/, { message: 'prefix must be 1 to 7 letters, digits or dashes, such as sk-AbCd' })
  prefix?: string;

  @ApiPropertyOptional({ enum: API_KEY_STATUSES, enumName: 'ApiKeyStatus', example: 'enabled' })
  @IsOptional()
  @IsIn(API_KEY_STATUSES, { message: 'status must be enabled, disabled or deleted' })
  status?: ApiKeyStatus;
}

/** A key as an operator sees it: the console's view and whose it is. */
export class AdminKeyDto extends ApiKeyResponseDto {
  @ApiProperty({ format: 'uuid', example: '9b2f6c1d-4e3a-4f5b-8c7d-6e5f4a3b2c1d' })
  accountId: string;
}

export class AdminKeyPageDto {
  @ApiProperty({ type: [AdminKeyDto] })
  data: AdminKeyDto[];

  @ApiProperty({
    example: 'WyIyMDI2LTExLTIxIDA4OjMwOjAwKzAwIiwiM2YxYyJd',
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null on the last',
  })
  nextCursor: string | null;
}
