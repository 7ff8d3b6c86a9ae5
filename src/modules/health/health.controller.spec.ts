import { FastifyReply } from 'fastify';
import { DependencyProbe, DependencyReport } from 'src/modules/health/dependency-probe';
import { HealthController } from 'src/modules/health/health.controller';
import { ShutdownState } from 'src/modules/health/shutdown.state';

const up = { up: true, latencyMs: 1, error: null };
const down = { up: false, latencyMs: 3, error: 'ECONNREFUSED' };

describe(HealthController.name, () => {
  const shutdown = new ShutdownState();
  const report = jest.fn<Promise<DependencyReport>, []>();
  const sut = new HealthController({ check: report } as unknown as DependencyProbe, shutdown);
  const reply = { code: jest.fn() };

  /** Readiness's status code and body. */
  async function readiness() {
    const body = await sut.getReadiness(reply as unknown as FastifyReply);
    return { status: reply.code.mock.lastCall?.[0] as number, body };
  }

  beforeEach(() => {
    shutdown.draining = false;
  });

  it('should stay ready while Postgres is away: admission runs from the Redis snapshots', async () => {
    report.mockResolvedValue({ postgres: down, redis: up });

    expect(await readiness()).toEqual({
      status: 200,
      body: { status: 'ok', checks: { postgres: 'failed', redis: 'ok', process: 'ok' } },
    });
  });

  it('should not be ready while Redis does not answer: nothing can be admitted', async () => {
    report.mockResolvedValue({ postgres: up, redis: down });

    expect(await readiness()).toEqual({
      status: 503,
      body: { status: 'unavailable', checks: { postgres: 'ok', redis: 'failed', process: 'ok' } },
    });
  });

  it('should not be ready while draining, whatever its dependencies', async () => {
    report.mockResolvedValue({ postgres: up, redis: up });
    shutdown.draining = true;

    expect((await readiness()).status).toBe(503);
  });
});
