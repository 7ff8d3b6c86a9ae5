import { slowStreamMemory, SlowStreamRun } from 'tools/bench/slow-stream-memory';

const run = (clients: number, apiPeakRssMb: number | null): SlowStreamRun => ({
  scenario: `sse-c${clients}-slow100ms`,
  clients,
  apiPeakRssMb,
  workerPeakRssMb: 120,
});

describe('slowStreamMemory', () => {
  it('should divide the RSS between the fewest and the most streams by the streams between them', () => {
    const runs = [run(500, 200), run(1000, 230)];
    expect(slowStreamMemory(runs)).toEqual({ runs, memoryPerStreamKB: 61.4 });
  });

  it('should take the extremes whatever the order they ran in', () => {
    expect(slowStreamMemory([run(1000, 230), run(250, 190), run(500, 200)]).memoryPerStreamKB).toBe(54.6);
  });

  it('should give no figure from one count, or from a run without a reading', () => {
    expect(slowStreamMemory([run(1000, 230)]).memoryPerStreamKB).toBeNull();
    expect(slowStreamMemory([run(500, null), run(1000, 230)]).memoryPerStreamKB).toBeNull();
    expect(slowStreamMemory([]).memoryPerStreamKB).toBeNull();
  });
});
