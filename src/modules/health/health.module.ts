import { Global, Module } from '@nestjs/common';
import { AdminHealthController } from 'src/modules/health/admin-health.controller';
import { DependencyProbe } from 'src/modules/health/dependency-probe';
import { HealthController } from 'src/modules/health/health.controller';
import { InFlightRequests } from 'src/modules/health/in-flight-requests';
import { MetricsController } from 'src/modules/health/metrics.controller';
import { ShutdownState } from 'src/modules/health/shutdown.state';

@Global()
@Module({
  controllers: [HealthController, AdminHealthController, MetricsController],
  providers: [ShutdownState, InFlightRequests, DependencyProbe],
  exports: [ShutdownState, InFlightRequests],
})
export class HealthModule {}
