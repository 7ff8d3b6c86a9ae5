import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { FastifyReply } from 'fastify';
import Redis from 'ioredis';
import { PublicRoute } from 'src/common/decorators/auth.decorators';
import { REDIS } from 'src/common/redis/redis.tokens';
import { ShutdownState } from 'src/modules/health/shutdown.state';
import { DataSource } from 'typeorm';

class HealthDto {
  status: 'ok' | 'unavailable';
  checks?: Record<string, 'ok' | 'failed' | 'draining'>;
}

@ApiTags('health')
@PublicRoute()
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly shutdown: ShutdownState,
  ) {}

  @Get('live')
  @ApiOkResponse({ description: 'The process is up' })
  live(): HealthDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOkResponse({ description: 'Postgres and Redis answer and the process is not draining' })
  @ApiServiceUnavailableResponse({ description: 'A dependency is down, or the process is shutting down' })
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthDto> {
    const [postgres, redis] = await Promise.all([
      this.dataSource.query('SELECT 1').then(
        () => 'ok' as const,
        () => 'failed' as const,
      ),
      withTimeout(this.redis.ping(), 1000).then(
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
