import { createRedis, mastersOf, RedisClient } from 'src/common/redis/redis-client';
import { redisTargetOf } from 'src/config/redis-config';
import { round } from 'tools/bench/load-result';

/** Redis's own counters at one moment, summed over its masters. */
export interface RedisCounters {
  /** CPU seconds, user + system, of the server (all its threads). */
  cpuSec: number;
  /** Microseconds spent running scripts (EVAL, EVALSHA, FCALL and their read-only forms). */
  scriptUsec: number;
  scriptCalls: number;
}

/** What the requests of a measured window cost Redis. */
export interface RedisCost {
  /** Redis's CPU in the window per successful request, µs: commands, networking, everything. */
  cpuUsPerRequest: number | null;
  /**
   * Script time in the window per successful request, µs. Redis runs one script at a time and nothing
   * else meanwhile: at fifty clients, an admission waits for the scripts queued before it.
   */
  scriptUsPerRequest: number | null;
  /** The same per script call. */
  scriptUsPerCall: number | null;
}

const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);
const CPU_FIELD = /^used_cpu_(?:user|sys):([\d.]+)/gm;
const COMMAND_STAT = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm;

/** The counters out of one server's `INFO cpu` and `INFO commandstats` text. */
export function parseRedisCounters(info: string): RedisCounters {
  let cpuSec = 0;
  for (const [, seconds] of info.matchAll(CPU_FIELD)) {
    cpuSec += Number(seconds);
  }
  let scriptUsec = 0;
  let scriptCalls = 0;
  for (const [, command, calls, usec] of info.matchAll(COMMAND_STAT)) {
    if (SCRIPT_COMMANDS.has(command.toLowerCase())) {
      scriptCalls += Number(calls);
      scriptUsec += Number(usec);
    }
  }
  return { cpuSec, scriptUsec, scriptCalls };
}

/** The window's cost per request, from the counters read as it opened and as it closed. */
export function redisCost(opened: RedisCounters, closed: RedisCounters, requests: number): RedisCost {
  const scriptUsec = closed.scriptUsec - opened.scriptUsec;
  const calls = closed.scriptCalls - opened.scriptCalls;
  const perRequest = (value: number) => (requests > 0 ? round(value / requests, 1) : null);
  return {
    cpuUsPerRequest: perRequest((closed.cpuSec - opened.cpuSec) * 1e6),
    scriptUsPerRequest: perRequest(scriptUsec),
    scriptUsPerCall: calls > 0 ? round(scriptUsec / calls, 1) : null,
  };
}

/**
 * Redis's share of a run, read from Redis itself at the window's marks (as EventLoopMaxProbe reads
 * the API's loop). Redis serves the bench's gateway (its API and worker) and the metered floor; it
 * is the one part every API process waits on, one command at a time, so its cost per request is
 * beside the API's in the report. The counters are server-wide: anything else using that Redis counts.
 */
export class RedisCostProbe {
  private readonly redis: RedisClient;
  private opened: Promise<RedisCounters | null> | undefined;
  private closed: Promise<RedisCounters | null> | undefined;

  constructor(redisUrl: string) {
    this.redis = createRedis(redisTargetOf(redisUrl, undefined), { maxRetriesPerRequest: 1 });
  }

  open(): void {
    this.opened = this.read();
    this.closed = undefined;
  }

  close(): void {
    this.closed = this.read();
  }

  /** The window's cost; null unless both reads were made and answered. */
  async windowCost(requests: number): Promise<RedisCost | null> {
    const [opened, closed] = await Promise.all([this.opened, this.closed]);
    return opened && closed ? redisCost(opened, closed, requests) : null;
  }

  async quit(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private async read(): Promise<RedisCounters | null> {
    try {
      // Two sections, two calls: INFO takes several sections at once only from Redis 7 on.
      const infos = await Promise.all(
        mastersOf(this.redis).map(
          async (master) => `${await master.info('cpu')}\n${await master.info('commandstats')}`,
        ),
      );
      return infos.map(parseRedisCounters).reduce((sum, counters) => ({
        cpuSec: sum.cpuSec + counters.cpuSec,
        scriptUsec: sum.scriptUsec + counters.scriptUsec,
        scriptCalls: sum.scriptCalls + counters.scriptCalls,
      }));
    } catch {
      return null;
    }
  }
}
