import { EventEmitter } from 'node:events';
import pino from 'pino';
import { logRedisErrors, withoutCredentials } from 'src/common/redis/redis-error-log';

describe(logRedisErrors.name, () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info', base: null, timestamp: false },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  );

  beforeEach(() => {
    lines.length = 0;
    jest.useFakeTimers({ now: 0 });
  });
  afterEach(() => jest.useRealTimers());

  it('should log the first error at once, then one line per ten seconds counting the ones left out', () => {
    const client = new EventEmitter();
    logRedisErrors(client, logger, 'commands');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

    for (let second = 0; second < 25; second++) {
      client.emit('error', refused);
      jest.advanceTimersByTime(1_000);
    }
    client.emit('ready');

    expect(lines).toEqual([
      { level: 50, client: 'commands', code: 'ECONNREFUSED', err: refused.message, unlogged: 0, msg: 'redis error' },
      { level: 50, client: 'commands', code: 'ECONNREFUSED', err: refused.message, unlogged: 9, msg: 'redis error' },
      { level: 50, client: 'commands', code: 'ECONNREFUSED', err: refused.message, unlogged: 9, msg: 'redis error' },
      { level: 30, client: 'commands', unlogged: 4, msg: 'redis connection restored' },
    ]);
  });

  it('should say nothing on a first connection', () => {
    const client = new EventEmitter();
    logRedisErrors(client, logger, 'commands');
    client.emit('ready');
    expect(lines).toEqual([]);
  });
});

describe(withoutCredentials.name, () => {
  it.each([
    ['redis://:secret@10.0.0.1:6379/0 refused', 'redis://[redacted]@10.0.0.1:6379/0 refused'],
    ['rediss://user:secret@cache.internal:6380', 'rediss://[redacted]@cache.internal:6380'],
    ['connect ECONNREFUSED 127.0.0.1:6379', 'connect ECONNREFUSED 127.0.0.1:6379'],
  ])('should turn %p into %p', (text, expected) => {
    expect(withoutCredentials(text)).toBe(expected);
  });
});
