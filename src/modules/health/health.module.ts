import { Global, Module } from '@nestjs/common';
import { HealthController } from 'src/modules/health/health.controller';
import { ShutdownState } from 'src/modules/health/shutdown.state';

@Global()
@Module({
  controllers: [HealthController],
  providers: [ShutdownState],
  exports: [ShutdownState],
})
export class HealthModule {}
