import { isNoeviction, parseRedisPersistence } from 'src/modules/health/redis-persistence';

const info = (lines: string[]) => ['# Persistence', ...lines, ''].join('\r\n');

describe(parseRedisPersistence.name, () => {
  it('should see the append-only file on and both writes healthy', () => {
    expect(
      parseRedisPersistence(
        info(['loading:0', 'aof_enabled:1', 'aof_last_write_status:ok', 'rdb_last_bgsave_status:ok']),
      ),
    ).toEqual({ aofEnabled: true, ok: true });
  });

  it('should see persistence off when the append-only file is disabled', () => {
    expect(parseRedisPersistence(info(['aof_enabled:0', 'rdb_last_bgsave_status:ok']))).toEqual({
      aofEnabled: false,
      ok: true,
    });
  });

  it('should report a failing AOF write or RDB save', () => {
    expect(parseRedisPersistence(info(['aof_enabled:1', 'aof_last_write_status:err'])).ok).toBe(false);
    expect(parseRedisPersistence(info(['aof_enabled:1', 'rdb_last_bgsave_status:err'])).ok).toBe(false);
  });
});

describe(isNoeviction.name, () => {
  const memory = (policy: string) =>
    ['# Memory', 'maxmemory:1073741824', `maxmemory_policy:${policy}`, ''].join('\r\n');

  it('should accept only noeviction', () => {
    expect(isNoeviction(memory('noeviction'))).toBe(true);
    expect(isNoeviction(memory('allkeys-lru'))).toBe(false);
    expect(isNoeviction(memory('noeviction-ish'))).toBe(false);
    expect(isNoeviction('# Memory\r\nmaxmemory:0\r\n')).toBe(false);
  });
});
