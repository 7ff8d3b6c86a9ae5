import { formatPairs, median, pairReports } from 'tools/bench/paired-runs';
import { BenchReport, BenchRow } from 'tools/bench/report';

function row(scenario: string, target: string, requestsPerSec: number, cpuUsPerRequest: number | null): BenchRow {
  return { scenario, target, requestsPerSec, server: { cpuUsPerRequest } } as unknown as BenchRow;
}

function report(...rows: BenchRow[]): BenchReport {
  return { rows } as BenchReport;
}

describe('paired bench runs', () => {
  it('should take the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });

  it('should line up each scenario and target across the runs of both builds, in the order they ran', () => {
    const base = [
      report(row('json-c50-up0ms', 'gateway', 1000, 900), row('json-c50-up0ms', 'passthrough', 4000, 250)),
      report(row('json-c50-up0ms', 'gateway', 1100, 1000), row('json-c50-up0ms', 'passthrough', 4100, 240)),
    ];
    const head = [
      report(row('json-c50-up0ms', 'gateway', 1200, 800), row('json-c50-up0ms', 'passthrough', 4050, 245)),
      report(row('json-c50-up0ms', 'gateway', 1150, 1050), row('json-c50-up0ms', 'passthrough', 4000, 250)),
    ];

    const [gateway, passthrough] = pairReports(base, head);

    expect(gateway).toEqual({
      scenario: 'json-c50-up0ms',
      target: 'gateway',
      base: { requestsPerSec: [1000, 1100], cpuUsPerRequest: [900, 1000] },
      head: { requestsPerSec: [1200, 1150], cpuUsPerRequest: [800, 1050] },
      // Medians 950 → 925.
      cpuMedianRatio: 0.974,
      // Cheaper in the first pair only.
      headCheaperPairs: 1,
      pairs: 2,
    });
    expect(passthrough.headCheaperPairs).toBe(1);
  });

  it('should leave out a row that some run lacks, and a pair a run is missing from', () => {
    const base = [report(row('a', 'gateway', 1, 10), row('b', 'gateway', 1, 10)), report(row('a', 'gateway', 1, 10))];
    const head = [report(row('a', 'gateway', 1, 9), row('b', 'gateway', 1, 9))];

    const paired = pairReports(base, head);

    expect(paired.map((figures) => figures.scenario)).toEqual(['a', 'b']);
    expect(paired[0].pairs).toBe(1);
  });

  it('should not call a change without CPU figures on both sides', () => {
    const paired = pairReports([report(row('a', 'gateway', 1, null))], [report(row('a', 'gateway', 1, 9))]);

    expect(paired[0].cpuMedianRatio).toBeNull();
    expect(paired[0].headCheaperPairs).toBe(0);
    expect(formatPairs(paired)).toContain('| a | gateway | 1 | 1 | - | 9 | - | 0 of 1 |');
  });

  it('should print the median change as a signed percentage', () => {
    const paired = pairReports([report(row('a', 'gateway', 1, 1000))], [report(row('a', 'gateway', 1, 840))]);

    expect(formatPairs(paired)).toContain('| -16 % | 1 of 1 |');
  });
});
