import { ConfigError } from 'src/config/config-error';
import { redisDbOf, redisTargetOf } from 'src/config/redis-config';

describe(redisTargetOf.name, () => {
  it('should take a redis:// URL as one server, and default to the local one', () => {
    expect(redisTargetOf('redis://:secret@cache:6380/3', undefined)).toEqual({
      kind: 'single',
      url: 'redis://:secret@cache:6380/3',
    });
    expect(redisTargetOf(undefined, undefined)).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6379/0' });
  });

  it('should read a redis-cluster:// URL as the seed nodes of a cluster, with its credentials', () => {
    expect(redisTargetOf('redis-cluster://user:p%40ss@10.0.0.1:6379,10.0.0.2:6380', undefined)).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 6379 },
        { host: '10.0.0.2', port: 6380 },
      ],
      username: 'user',
      password: 'p@ss',
      tls: false,
    });
    expect(redisTargetOf('rediss-cluster://cache-a:6379', undefined)).toMatchObject({ kind: 'cluster', tls: true });
  });

  it('should let REDIS_CLUSTER_NODES win over REDIS_URL, keeping the URL’s password', () => {
    expect(redisTargetOf('redis://:secret@ignored:6379/0', 'a:7000, b:7001')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
      ],
      password: 'secret',
      tls: false,
    });
  });

  it.each([
    ['redis-cluster://10.0.0.1', undefined, "REDIS_URL: '10.0.0.1' is not host:port"],
    ['redis-cluster://a:6379,b:6379/2', undefined, 'a Redis Cluster has only db 0'],
    [undefined, 'a:6379,,b:6379', "REDIS_CLUSTER_NODES: '' is not host:port"],
    [undefined, 'a:99999', "REDIS_CLUSTER_NODES: 'a:99999' is not host:port"],
  ])('should refuse %p / %p with a message naming the variable', (url, nodes, message) => {
    expect(() => redisTargetOf(url, nodes)).toThrow(ConfigError);
    expect(() => redisTargetOf(url, nodes)).toThrow(message);
  });

  it('should name pub/sub channels by the db index of one server, and 0 on a cluster', () => {
    expect(redisDbOf(redisTargetOf('redis://127.0.0.1:6379/5', undefined))).toBe('5');
    expect(redisDbOf(redisTargetOf(undefined, 'a:1'))).toBe('0');
  });
});
