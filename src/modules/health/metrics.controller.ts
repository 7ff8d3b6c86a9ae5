import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { ApiBearerAuth, ApiOkResponse, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { PublicRoute } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { metricsRegistry } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { DependencyProbe } from 'src/modules/health/dependency-probe';
import { MetricsToken } from 'src/modules/health/metrics-token';

@ApiTags('health')
@PublicRoute()
@Controller('metrics')
export class MetricsController {
  private readonly token: MetricsToken;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly dependencies: DependencyProbe,
  ) {
    this.token = new MetricsToken(config.metricsToken);
  }

  @Get()
  @ApiBearerAuth('metrics')
  @ApiOkResponse({
    description: 'Prometheus metrics of this process (counts only, never content or keys)',
    content: { 'text/plain': { schema: { type: 'string', example: 'gateway_requests_total 42' } } },
  })
  @ApiUnauthorizedResponse({ description: 'METRICS_TOKEN is set and was not sent as the bearer token' })
  async getMetrics(
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    if (!this.token.allows(authorization)) {
      throw new ApiError(ErrorKind.InvalidMetricsToken, 'Invalid or missing metrics token.');
    }
    // Set here, not with @Header: a refusal must still go out as the JSON error object.
    void reply.header('content-type', 'text/plain; version=0.0.4');
    // gateway_dependency_up as of this scrape (each probe bounded to 1 s, well inside a scrape's timeout).
    await this.dependencies.check();
    return metricsRegistry.metrics();
  }
}
