import { parseRedisCounters, redisCost } from 'tools/bench/redis-cost';

// As Redis 7 prints them (two INFO sections, CRLF line ends).
const info = (cpuUser: string, cpuSys: string, evalshaCalls: number, evalshaUsec: number) =>
  [
    '# CPU',
    `used_cpu_sys:${cpuSys}`,
    `used_cpu_user:${cpuUser}`,
    'used_cpu_sys_children:4.000000',
    'used_cpu_user_children:9.000000',
    'used_cpu_sys_main_thread:1.000000',
    '',
    '# Commandstats',
    `cmdstat_evalsha:calls=${evalshaCalls},usec=${evalshaUsec},usec_per_call=1.00,rejected_calls=0,failed_calls=0`,
    'cmdstat_eval:calls=2,usec=300,usec_per_call=150.00,rejected_calls=0,failed_calls=0',
    'cmdstat_hget:calls=500,usec=250,usec_per_call=0.50,rejected_calls=0,failed_calls=0',
    'cmdstat_info:calls=40,usec=400,usec_per_call=10.00,rejected_calls=0,failed_calls=0',
  ].join('\r\n');

describe('parseRedisCounters', () => {
  it("should add the server's user and system CPU, not its children's or the main thread's again", () => {
    expect(parseRedisCounters(info('10.500000', '2.250000', 0, 0)).cpuSec).toBeCloseTo(12.75, 6);
  });

  it('should count script commands only, EVAL and EVALSHA alike', () => {
    const counters = parseRedisCounters(info('1', '1', 1_000, 50_000));
    expect(counters).toMatchObject({ scriptCalls: 1_002, scriptUsec: 50_300 });
  });

  it('should read nothing from text without the sections', () => {
    expect(parseRedisCounters('')).toEqual({ cpuSec: 0, scriptUsec: 0, scriptCalls: 0 });
  });
});

describe('redisCost', () => {
  it("should divide the window's CPU and script time by its requests, and script time by its calls", () => {
    const opened = parseRedisCounters(info('10.000000', '2.000000', 1_000, 50_000));
    const closed = parseRedisCounters(info('10.600000', '2.200000', 5_000, 290_000));
    expect(redisCost(opened, closed, 2_000)).toEqual({
      cpuUsPerRequest: 400,
      scriptUsPerRequest: 120,
      scriptUsPerCall: 60,
    });
  });

  it('should give no figure per request for a window without requests, nor per call without calls', () => {
    const counters = parseRedisCounters(info('1', '1', 10, 100));
    expect(redisCost(counters, counters, 0)).toEqual({
      cpuUsPerRequest: null,
      scriptUsPerRequest: null,
      scriptUsPerCall: null,
    });
  });
});
