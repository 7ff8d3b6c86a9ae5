import { Controller, Get, Inject, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { FastifyReply } from 'fastify';
import { PublicRoute } from 'src/common/decorators/auth.decorators';
import { mastersOf, RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { ShutdownState } from 'src/modules/health/shutdown.state';
import { DataSource } from 'typeorm';

enum HealthStatus {
  Ok = 'ok',
  Unavailable = 'unavailable',
}

class HealthChecksDto {
  @ApiProperty({ enum: ['ok', 'failed'], enumName: 'DependencyCheck', example: 'ok' })
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
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly shutdown: ShutdownState,
  ) {}

  @Get('live')
  @ApiOkResponse({ description: 'The process is up', type: HealthDto })
  getLiveness(): HealthDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOkResponse({ description: 'Postgres and Redis answer and the process is not draining', type: HealthDto })
  @ApiServiceUnavailableResponse({
    description: 'A dependency is down, or the process is shutting down',
    type: HealthDto,
  })
  async getReadiness(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthDto> {
    const [postgres, redis] = await Promise.all([
      this.dataSource.query('SELECT 1').then(
        () => 'ok' as const,
        () => 'failed' as const,
      ),
      // Every master on a cluster: a request may need any account's slot.
      withTimeout(pingMasters(this.redis), 1000).then(
        () => 'ok' as const,
        () => 'failed' as const,
      ),
    ]);
    const checks = { postgres, redis, process: this.shutdown.draining ? ('draining' as const) : ('ok' as const) };
    const ok = Object.values(checks).every((check) => check === 'ok');
    void reply.code(ok ? 200 : 503);
    return { status: ok ? 'ok' : 'unavailable', checks };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms))]);
}

async function pingMasters(redis: RedisClient): Promise<void> {
  const masters = mastersOf(redis);
  if (masters.length === 0) {
    throw new Error('no Redis master known yet');
  }
  await Promise.all(masters.map((master) => master.ping()));
}
