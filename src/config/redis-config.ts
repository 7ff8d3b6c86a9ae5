import { ConfigError } from 'src/config/config-error';

/** Where Redis is: one server (its db index isolates a deployment), or a Redis Cluster (db 0 only). */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | {
      kind: 'cluster';
      /** Seed nodes; the client discovers the rest of the cluster from them. */
      nodes: { host: string; port: number }[];
      username?: string;
      password?: string;
      tls: boolean;
    };

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379/0';
const CLUSTER_SCHEMES = ['redis-cluster:', 'rediss-cluster:'];

/**
 * REDIS_URL (`redis://…`, `rediss://…`, or `redis-cluster://[user:password@]host1:port,host2:port`),
 * unless REDIS_CLUSTER_NODES (`host1:port,host2:port`) names a cluster, which wins. Credentials of
 * a cluster named by REDIS_CLUSTER_NODES come from REDIS_URL's userinfo when it has one.
 */
export function redisTargetOf(redisUrl: string | undefined, clusterNodes: string | undefined): RedisTarget {
  if (clusterNodes) {
    const nodes = parseNodes(clusterNodes, 'REDIS_CLUSTER_NODES');
    const credentials = redisUrl ? userInfoOf(redisUrl) : {};
    return { kind: 'cluster', nodes, ...credentials, tls: redisUrl?.startsWith('rediss') ?? false };
  }
  const url = redisUrl ?? DEFAULT_REDIS_URL;
  const scheme = CLUSTER_SCHEMES.find((prefix) => url.startsWith(`${prefix}//`));
  if (!scheme) {
    return { kind: 'single', url };
  }
  // Several host:port pairs are no URL authority: userinfo is cut off by hand.
  const rest = url.slice(scheme.length + 2).replace(/\/.*$/, '');
  const at = rest.lastIndexOf('@');
  const hosts = at >= 0 ? rest.slice(at + 1) : rest;
  if (/\/\d*[1-9]/.test(url.slice(scheme.length + 2))) {
    throw new ConfigError('Invalid environment variable REDIS_URL: a Redis Cluster has only db 0');
  }
  const credentials = at >= 0 ? userInfoOf(`redis://${rest.slice(0, at)}@localhost`) : {};
  return {
    kind: 'cluster',
    nodes: parseNodes(hosts, 'REDIS_URL'),
    ...credentials,
    tls: scheme === 'rediss-cluster:',
  };
}

function parseNodes(list: string, variable: string): { host: string; port: number }[] {
  const nodes = list.split(',').map((entry) => entry.trim());
  return nodes.map((node) => {
    const match = /^([^\s:,/@]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(node);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535) {
      throw new ConfigError(
        `Invalid environment variable ${variable}: '${node}' is not host:port (expected host1:port,host2:port)`,
      );
    }
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
}

function userInfoOf(url: string): { username?: string; password?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('Invalid environment variable REDIS_URL: not a URL');
  }
  const username = decodeURIComponent(parsed.username) || undefined;
  const password = decodeURIComponent(parsed.password) || undefined;
  return { ...(username ? { username } : {}), ...(password ? { password } : {}) };
}

/** The db index of a single Redis (pub/sub channels are named by it); 0 on a cluster. */
export function redisDbOf(target: RedisTarget): string {
  return target.kind === 'single' ? new URL(target.url).pathname.slice(1) || '0' : '0';
}
