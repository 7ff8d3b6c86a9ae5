import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { metrics } from 'src/common/metrics/metrics';
import { mastersOf, RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { DataSource } from 'typeorm';

/** A probe gives up after this long: a dependency that answers slower is as good as down for a probe. */
export const PROBE_TIMEOUT_MS = 1_000;

export type Dependency = 'postgres' | 'redis';

export interface DependencyState {
  up: boolean;
  /** How long the probe took (up to the timeout). */
  latencyMs: number;
  /** Why it failed: a network or SQLSTATE code, or `timeout`; never a message (it may carry a query). */
  error: string | null;
}

export type DependencyReport = Record<Dependency, DependencyState>;

/**
 * Asks Postgres (`SELECT 1`) and every Redis master (PING) whether they answer, each bounded by
 * PROBE_TIMEOUT_MS, and records the answer in `gateway_dependency_up`. Used by readiness, the
 * operators' detail and each scrape, in the API and in the worker.
 */
@Injectable()
export class DependencyProbe {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  async check(): Promise<DependencyReport> {
    const [postgres, redis] = await Promise.all([
      timed(() => this.dataSource.query('SELECT 1')),
      // Every master on a cluster: a request may need any account's slot.
      timed(() => pingMasters(this.redis)),
    ]);
    metrics.dependencyUp.set({ dependency: 'postgres' }, postgres.up ? 1 : 0);
    metrics.dependencyUp.set({ dependency: 'redis' }, redis.up ? 1 : 0);
    return { postgres, redis };
  }
}

async function timed(probe: () => Promise<unknown>): Promise<DependencyState> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'timeout' })), PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), deadline]);
    return { up: true, latencyMs: Date.now() - started, error: null };
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    return { up: false, latencyMs: Date.now() - started, error: typeof code === 'string' ? code : 'error' };
  } finally {
    clearTimeout(timer);
  }
}

async function pingMasters(redis: RedisClient): Promise<void> {
  const masters = mastersOf(redis);
  if (masters.length === 0) {
    throw Object.assign(new Error('no Redis master known yet'), { code: 'no_master' });
  }
  await Promise.all(masters.map((master) => master.ping()));
}
