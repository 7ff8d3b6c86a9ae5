import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { PublicRoute } from 'src/common/decorators/auth.decorators';
import { metricsRegistry } from 'src/common/metrics/metrics';

@ApiTags('health')
@PublicRoute()
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('content-type', 'text/plain; version=0.0.4')
  @ApiOkResponse({
    description: 'Prometheus metrics of this process (counts only, never content or keys)',
    content: { 'text/plain': { schema: { type: 'string', example: 'gateway_requests_total 42' } } },
  })
  getMetrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
