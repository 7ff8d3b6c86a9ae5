import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { ADMIN_ROLES, AdminRole } from 'src/config/admin-tokens';
import { PageQueryDto } from 'src/common/http/date-range.dto';
import { AUDIT_OUTCOMES, AuditEntryEntity, AuditOutcome } from 'src/modules/audit/audit-entry.entity';

class AuditFilterDto {
  @ApiPropertyOptional({
    description: 'channel, model, account, rate_limit, payment_settings, topup, …',
    example: 'channel',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  targetType?: string;

  @ApiPropertyOptional({ description: "The target's id (a rate limit's is accountId/modelId)", example: 'openai-main' })
  @IsOptional()
  @IsString()
  @MaxLength(600)
  targetId?: string;

  @ApiPropertyOptional({ description: 'The admin token name (ADMIN_TOKENS; ADMIN_TOKEN is default)', example: 'ops' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  actor?: string;
}

export class AuditQueryDto extends IntersectionType(PageQueryDto, AuditFilterDto) {}

export class AuditEntryDto {
  @ApiProperty({ example: '1042' })
  id: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T08:30:00.000Z' })
  at: string;

  @ApiProperty({ description: 'The name of the admin token used', example: 'ops' })
  actor: string;

  @ApiProperty({
    enum: ADMIN_ROLES,
    enumName: 'AdminRole',
    description: "The token's role when it made the change",
    example: 'operator',
  })
  actorRole: AdminRole;

  @ApiProperty({ example: 'PUT' })
  method: string;

  @ApiProperty({ description: "The route's pattern", example: '/admin/channels/:channelId' })
  route: string;

  @ApiProperty({ example: 'channel' })
  targetType: string;

  @ApiProperty({ nullable: true, type: String, example: 'openai-main' })
  targetId: string | null;

  @ApiProperty({
    nullable: true,
    type: 'object',
    additionalProperties: true,
    description: 'The target before the change (its stored columns), secrets left out; null: it did not exist',
    example: { id: 'openai-main', base_url: 'https://api.openai.com/v1', priority: 0, enabled: true },
  })
  before: Record<string, unknown> | null;

  @ApiProperty({
    nullable: true,
    type: 'object',
    additionalProperties: true,
    description: 'The target after the change, secrets left out; null: deleted, failed, or nothing to show',
    example: { id: 'openai-main', base_url: 'https://api.openai.com/v1', priority: 1, enabled: true },
  })
  after: Record<string, unknown> | null;

  @ApiProperty({
    type: [String],
    description: 'Secret fields whose value changed (their values are never logged)',
    example: ['apiKey'],
  })
  secretsChanged: string[];

  @ApiProperty({
    enum: AUDIT_OUTCOMES,
    enumName: 'AuditOutcome',
    description: '`pending`: logged before the change, whose end was never recorded (its process stopped)',
    example: 'applied',
  })
  outcome: AuditOutcome;

  @ApiProperty({ nullable: true, type: 'integer', description: 'The HTTP status answered', example: 200 })
  status: number | null;

  static from(entry: AuditEntryEntity): AuditEntryDto {
    return {
      id: entry.id,
      at: entry.at.toISOString(),
      actor: entry.actor,
      actorRole: entry.actorRole,
      method: entry.method,
      route: entry.route,
      targetType: entry.targetType,
      targetId: entry.targetId,
      before: entry.before,
      after: entry.after,
      secretsChanged: entry.secretsChanged,
      outcome: entry.outcome,
      status: entry.status,
    };
  }
}

export class AuditPageDto {
  @ApiProperty({ type: [AuditEntryDto], description: 'Newest first' })
  data: AuditEntryDto[];

  @ApiProperty({
    example: 'WyIxMDQyIl0',
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null on the last',
  })
  nextCursor: string | null;
}
