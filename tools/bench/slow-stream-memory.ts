import { round } from 'tools/bench/load-result';

/** One many-slow-streams run: how many streams were open, and the API's peak RSS meanwhile. */
export interface SlowStreamRun {
  scenario: string;
  clients: number;
  apiPeakRssMb: number | null;
  workerPeakRssMb: number | null;
}

export interface SlowStreamMemory {
  runs: SlowStreamRun[];
  /**
   * What one more open stream costs the API, KB: the peak RSS at the most streams minus that at the
   * fewest, over the difference in streams ((RSS at 1,000 − RSS at 500) ÷ 500 by default). Null unless
   * two counts ran. The fixed part (code, caches, the heap at rest) cancels out.
   */
  memoryPerStreamKB: number | null;
}

export function slowStreamMemory(runs: SlowStreamRun[]): SlowStreamMemory {
  const measured = runs.filter((run) => run.apiPeakRssMb !== null && run.apiPeakRssMb > 0);
  const byClients = [...measured].sort((a, b) => a.clients - b.clients);
  const fewest = byClients[0];
  const most = byClients[byClients.length - 1];
  const memoryPerStreamKB =
    fewest && most && most.clients > fewest.clients
      ? round((((most.apiPeakRssMb ?? 0) - (fewest.apiPeakRssMb ?? 0)) * 1024) / (most.clients - fewest.clients), 1)
      : null;
  return { runs, memoryPerStreamKB };
}
