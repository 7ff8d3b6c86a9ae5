import { parseBenchArgs } from 'tools/bench/bench-options';
import { planScenarios } from 'tools/bench/scenarios';

const names = (...args: string[]) => planScenarios(parseBenchArgs(args, '/tmp')).map((scenario) => scenario.name);

// The plan before prompt sizes and a second slow-stream count: runs are compared by these names across commits.
const PLAIN = [
  'json-c1-up0ms',
  'json-c50-up0ms',
  'json-c1-up50ms',
  'json-c50-up50ms',
  'sse-c1-up0ms',
  'sse-c50-up0ms',
  'sse-c1-up50ms',
  'sse-c50-up50ms',
];

describe('planScenarios', () => {
  it('should run the plain scenarios, then the slow streams and the long stream, then the prompt sizes', () => {
    const plan = names();
    expect(plan.slice(0, 13)).toEqual([
      ...PLAIN,
      'sse-c500-slow100ms',
      'sse-c1000-slow100ms',
      'p32k-sse-c500-slow100ms',
      'p32k-sse-c1000-slow100ms',
      'sse-long-n8',
    ]);
    expect(plan.slice(13)).toHaveLength(17);
    expect(plan.at(-1)).toBe('deadfirst-json-c1-up0ms');
    expect(plan).toContain('p1k-json-c1-up0ms');
    expect(plan).toContain('p256k-sse-c50-up0ms');
    expect(plan).toContain('img1m-json-c50-up0ms');
  });

  it('should let each earlier scenario name select that scenario alone', () => {
    for (const name of [...PLAIN, 'sse-c1000-slow100ms', 'sse-long-n8']) {
      expect(names('--only', name)).toEqual([name]);
    }
  });

  it('should not cut a number short', () => {
    expect(names('--only', 'c50')).toEqual(PLAIN.filter((name) => name.includes('-c50-')));
    expect(names('--only', 'sse-c50')).toEqual(['sse-c50-up0ms', 'sse-c50-up50ms']);
    expect(names('--only', 'c500')).toEqual(['sse-c500-slow100ms']);
  });

  it('should select a prompt-size scenario only by a part naming its prompt', () => {
    expect(names('--only', 'json')).toEqual(PLAIN.slice(0, 4));
    expect(names('--only', 'p32k')).toEqual([
      'p32k-sse-c500-slow100ms',
      'p32k-sse-c1000-slow100ms',
      'p32k-json-c1-up0ms',
      'p32k-json-c50-up0ms',
      'p32k-sse-c1-up0ms',
      'p32k-sse-c50-up0ms',
    ]);
    expect(names('--only', 'slow100ms')).toEqual(['sse-c500-slow100ms', 'sse-c1000-slow100ms']);
    const [slow] = planScenarios(parseBenchArgs(['--only', 'p32k-sse-c1000'], '/tmp'));
    expect(slow).toMatchObject({ slowStreams: true, clients: 1000, prompt: { id: 'p32k' }, targets: ['gateway'] });
    expect(names('--only', 'p256k-sse-c50')).toEqual(['p256k-sse-c50-up0ms']);
    expect(names('--only', 'img1m-json,sse-c1-up0ms')).toEqual([
      'sse-c1-up0ms',
      'img1m-json-c1-up0ms',
      'img1m-json-c50-up0ms',
    ]);
  });

  it('should select the dead-first scenario only by naming it, and run it on the passthrough and the gateway', () => {
    expect(names('--only', 'deadfirst')).toEqual(['deadfirst-json-c1-up0ms']);
    expect(names('--only', 'json-c1-up0ms')).toEqual(['json-c1-up0ms']);
    const [scenario] = planScenarios(parseBenchArgs(['--only', 'deadfirst'], '/tmp'));
    expect(scenario).toMatchObject({ deadFirst: true, stream: false, clients: 1, targets: ['passthrough', 'gateway'] });
  });

  it('should run one slow-stream scenario per --slow-clients count', () => {
    expect(names('--only', 'slow')).toEqual(['sse-c500-slow100ms', 'sse-c1000-slow100ms']);
    expect(names('--only', 'slow', '--slow-clients', '2000')).toEqual(['sse-c2000-slow100ms']);
  });

  it('should leave the smoke plan as it was', () => {
    expect(names('--smoke')).toEqual(['json-c1-up0ms', 'sse-c1-up0ms']);
  });
});
