import { Controller, Get, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { PublicRoute } from 'src/common/decorators/auth.decorators';
import { DependencyProbe } from 'src/modules/health/dependency-probe';
import { ShutdownState } from 'src/modules/health/shutdown.state';

enum HealthStatus {
  Ok = 'ok',
  Unavailable = 'unavailable',
}

class HealthChecksDto {
  @ApiProperty({
    enum: ['ok', 'failed'],
    enumName: 'DependencyCheck',
    example: 'ok',
    description: 'Shown, not required: the API keeps admitting from Redis snapshots while Postgres is away',
  })
  postgres: 'ok' | 'failed';

  @ApiProperty({ enum: ['ok', 'failed'], enumName: 'DependencyCheck', example: 'ok' })
  redis: 'ok' | 'failed';

  @ApiProperty({ enum: ['ok', 'draining'], enumName: 'ProcessCheck', example: 'ok' })
  process: 'ok' | 'draining';
}

class HealthDto {
  @ApiProperty({ enum: HealthStatus, enumName: 'HealthStatus', example: 'ok' })
  status: 'ok' | 'unavailable';

  @ApiPropertyOptional({ type: HealthChecksDto, description: 'Readiness only: each dependency' })
  checks?: HealthChecksDto;
}

@ApiTags('health')
@PublicRoute()
@Controller('health')
export class HealthController {
  constructor(
    private readonly dependencies: DependencyProbe,
    private readonly shutdown: ShutdownState,
  ) {}

  @Get('live')
  @ApiOkResponse({ description: 'The process is up', type: HealthDto })
  getLiveness(): HealthDto {
    return { status: 'ok' };
  }

  /**
   * Whether this process should get new traffic. Postgres is not required: admission runs from the
   * Redis balance snapshots and usage settles once it returns (docs/billing.md), so failing readiness
   * on a Postgres blip would take every pod out of the Service and turn the blip into an outage.
   */
  @Get('ready')
  @ApiOkResponse({
    description: 'Redis answers and the process is not draining (Postgres may be away)',
    type: HealthDto,
  })
  @ApiServiceUnavailableResponse({
    description: 'Redis does not answer (nothing can be admitted), or the process is shutting down',
    type: HealthDto,
  })
  async getReadiness(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthDto> {
    const { postgres, redis } = await this.dependencies.check();
    const checks = {
      postgres: postgres.up ? ('ok' as const) : ('failed' as const),
      redis: redis.up ? ('ok' as const) : ('failed' as const),
      process: this.shutdown.draining ? ('draining' as const) : ('ok' as const),
    };
    const ok = checks.redis === 'ok' && checks.process === 'ok';
    void reply.code(ok ? 200 : 503);
    return { status: ok ? 'ok' : 'unavailable', checks };
  }
}
