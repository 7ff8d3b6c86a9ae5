import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { DependencyProbe } from 'src/modules/health/dependency-probe';
import { InFlightRequests } from 'src/modules/health/in-flight-requests';
import { ShutdownState } from 'src/modules/health/shutdown.state';

class DependencyStateDto {
  @ApiProperty({ example: true })
  up: boolean;

  @ApiProperty({ example: 2, description: 'How long the probe took, in ms (it gives up after 1,000)' })
  latencyMs: number;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'ECONNREFUSED',
    description: 'Why the probe failed: a network or SQLSTATE code, or `timeout`; null when up',
  })
  error: string | null;
}

class DependencyStatesDto {
  @ApiProperty({ type: DependencyStateDto })
  postgres: DependencyStateDto;

  @ApiProperty({ type: DependencyStateDto })
  redis: DependencyStateDto;
}

class HealthDetailDto {
  @ApiProperty({ example: false, description: 'This process got SIGTERM and refuses new traffic' })
  draining: boolean;

  @ApiProperty({ example: 3, description: 'Requests this process is still answering' })
  inFlight: number;

  @ApiProperty({ type: DependencyStatesDto })
  dependencies: DependencyStatesDto;
}

/** The operators' view of this process's dependencies: readiness's answer with its reasons. */
@ApiTags('admin')
@AdminAuth()
@Controller('admin/health')
export class AdminHealthController {
  constructor(
    private readonly dependencies: DependencyProbe,
    private readonly shutdown: ShutdownState,
    private readonly inFlight: InFlightRequests,
  ) {}

  @Permission('read')
  @Get()
  @ApiOkResponse({
    description: "This process's dependencies as it sees them now (each pod answers for itself)",
    type: HealthDetailDto,
  })
  async getHealthDetail(): Promise<HealthDetailDto> {
    return {
      draining: this.shutdown.draining,
      inFlight: this.inFlight.count,
      dependencies: await this.dependencies.check(),
    };
  }
}
