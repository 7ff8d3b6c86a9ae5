import { Global, Module } from '@nestjs/common';
import { HealthController } from 'src/modules/health/health.controller';
import { MetricsController } from 'src/modules/health/metrics.controller';
import { ShutdownState } from 'src/modules/health/shutdown.state';

@Global()
@Module({
  controllers: [HealthController, MetricsController],
  providers: [ShutdownState],
  exports: [ShutdownState],
})
export class HealthModule {}
