import { Counter, Histogram, Registry } from 'prom-client';
import { OneLabelHistogram, TalliedCounter } from 'src/common/metrics/request-path-metrics';

/** A scrape's lines in a fixed order: the order of series is not part of the format. */
const lines = (text: string) => text.split('\n').sort();

const BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

describe('request-path metrics', () => {
  it('a tallied counter scrapes as the same series as prom-client counting each increment', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const tallied = new TalliedCounter({
      name: 'requests_total',
      help: 'Requests',
      labelNames: ['model', 'outcome'] as const,
      registry: ours,
    });
    const counter = new Counter({
      name: 'requests_total',
      help: 'Requests',
      labelNames: ['model', 'outcome'] as const,
      registers: [theirs],
    });
    const increments: [string, string][] = [
      ['gpt-4o', 'completed'],
      ['gpt-4o', 'completed'],
      ['claude "quoted"', 'failed_status'],
      ['gpt-4o', 'client_aborted'],
    ];

    for (const upTo of [2, 4]) {
      increments.slice(0, upTo).forEach(([model, outcome]) => {
        tallied.inc(model, outcome);
        counter.inc({ model, outcome });
      });
      // Read after each round: a scrape adds what was tallied since the last one, once.
      expect(lines(await ours.metrics())).toEqual(lines(await theirs.metrics()));
    }
  });

  it('a one-label histogram scrapes as the same text as prom-client observing the same values', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const histogram = new OneLabelHistogram('first_byte_seconds', 'First byte', 'channel', BUCKETS, ours);
    const reference = new Histogram({
      name: 'first_byte_seconds',
      help: 'First byte',
      labelNames: ['channel'] as const,
      buckets: BUCKETS,
      registers: [theirs],
    });
    // Bounds themselves, between them, below the first and above the last.
    const values = [0, 0.001, 0.005, 0.0051, 0.3, 1, 2.5, 29.9, 30, 31, 1_000];
    values.forEach((value, i) => {
      const channel = i % 3 === 0 ? 'channel-a' : 'channel-b';
      histogram.observe(channel, value);
      reference.observe({ channel }, value);
    });

    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('a one-label histogram leaves out a value that is not a number, and reset empties it', async () => {
    const registry = new Registry();
    const histogram = new OneLabelHistogram('first_byte_seconds', 'First byte', 'channel', BUCKETS, registry);

    histogram.observe('a', Number.NaN);
    histogram.observe('a', Number.POSITIVE_INFINITY);
    histogram.observe('a', 0.2);
    expect(await registry.metrics()).toContain('first_byte_seconds_count{channel="a"} 1');
    expect(await registry.metrics()).toContain('first_byte_seconds_sum{channel="a"} 0.2');

    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('channel="a"');
  });
});
