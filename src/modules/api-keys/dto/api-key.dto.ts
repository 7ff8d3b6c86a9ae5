import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import { API_KEY_STATUSES, ApiKeyStatus } from 'src/modules/api-keys/api-key.entity';

export class ApiKeyCreateDto {
  @ApiProperty({ description: 'A label for the key', example: 'production', minLength: 1, maxLength: 100 })
  @IsString()
  @Length(1, 100)
  name: string;
}

export class ApiKeyUpdateDto {
  @ApiProperty({ enum: ['enabled', 'disabled'], example: 'disabled' })
  @IsIn(['enabled', 'disabled'])
  status: 'enabled' | 'disabled';
}

export class ApiKeyResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'production' })
  name: string;

  @ApiProperty({ enum: API_KEY_STATUSES, example: 'enabled' })
  status: ApiKeyStatus;

  @ApiProperty({ description: 'The first characters of the key, the rest masked', example: 'sk-AbCd********' })
  maskedKey: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  lastUsedAt: string | null;
}

export class ApiKeyCreatedResponseDto extends ApiKeyResponseDto {
  @ApiPropertyOptional({ description: 'The secret key. Shown this once; only its hash is stored.', example: 'sk-…' })
  key: string;
}

export class ApiKeyListResponseDto {
  @ApiProperty({ type: [ApiKeyResponseDto] })
  data: ApiKeyResponseDto[];
}
