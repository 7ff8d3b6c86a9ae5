import { Global, Module } from '@nestjs/common';
import { HealthController } from 'src/modules/health/health.controller';
import { InFlightRequests } from 'src/modules/health/in-flight-requests';
import { MetricsController } from 'src/modules/health/metrics.controller';
import { ShutdownState } from 'src/modules/health/shutdown.state';

@Global()
@Module({
  controllers: [HealthController, MetricsController],
  providers: [ShutdownState, InFlightRequests],
  exports: [ShutdownState, InFlightRequests],
})
export class HealthModule {}
