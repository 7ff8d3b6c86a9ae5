import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { REDIS } from 'src/common/redis/redis.tokens';

// Keys: one snapshot hash per account {balance, version, reserved}, its open holds {requestId: amount},
// and one index of all holds by time, for the sweeper that releases holds no settlement will ever close.
const snapshotKey = (accountId: string) => `gw:bal:${accountId}`;
const holdsKey = (accountId: string) => `gw:holds:${accountId}`;
const HOLD_INDEX = 'gw:holds:index';
// Usage recorded for a hold and not settled yet: {requestId: payload JSON} per account, and one index
// of all of it scored by when it may be claimed: its recording time, or the end of a worker's lease.
const USAGE_PREFIX = 'gw:usage:';
const usageKey = (accountId: string) => `${USAGE_PREFIX}${accountId}`;
const USAGE_INDEX = 'gw:usage:index';

// Amounts are passed as strings and moved with HINCRBY so the arithmetic stays exact 64-bit; only the
// admission comparison goes through Lua numbers (exact below 2^53 nano-dollars, about $9 million).
const HOLD_SCRIPT = `
local snapshot = redis.call('HMGET', KEYS[1], 'balance', 'reserved')
if not snapshot[1] then return {-1, '0'} end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return {1, '0'} end
local available = tonumber(snapshot[1]) - tonumber(snapshot[2] or '0')
if available < tonumber(ARGV[2]) then return {0, tostring(available)} end
redis.call('HINCRBY', KEYS[1], 'reserved', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
return {1, '0'}`;

const SYNC_SNAPSHOT = `
local function sync(key, balance, version)
  local current = redis.call('HGET', key, 'version')
  if (not current) or tonumber(version) > tonumber(current) then
    redis.call('HSET', key, 'balance', balance, 'version', version)
  end
end`;

const SYNC_SCRIPT = `${SYNC_SNAPSHOT}
sync(KEYS[1], ARGV[1], ARGV[2])
return 1`;

// Settlement's release (ARGV[5] = '0') closes the hold and the recorded usage together. Giving an
// unused hold back (ARGV[5] = '1') refuses once usage is recorded for it: that hold is settlement's,
// even if the request failed after a recording whose reply was lost.
const RELEASE_SCRIPT = `${SYNC_SNAPSHOT}
if ARGV[5] == '1' and redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then return 0 end
local amount = redis.call('HGET', KEYS[2], ARGV[1])
if amount then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'reserved', '-' .. amount)
end
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[2])
if ARGV[3] ~= '' then sync(KEYS[1], ARGV[3], ARGV[4]) end
return amount and 1 or 0`;

// Claim times are Redis's clock, never a process's: an API process whose clock runs ahead of the
// workers' would otherwise record usage the settlement it asked for cannot claim yet.
const REDIS_NOW_MS = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

// Claimable at once. NX: a recording replayed after a reconnect must not cut a worker's lease short.
const RECORD_SCRIPT = `${REDIS_NOW_MS}
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[3])
return 1`;

// Claims up to ARGV[1] recorded usages claimable now by moving them ARGV[2] ms into the future: a
// worker that dies holding them only delays them. The per-account hash key is derived
// here (not declared), as the member names its account; fine on one Redis, not on a cluster.
const CLAIM_SCRIPT = `${REDIS_NOW_MS}
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local payloads = {}
for _, member in ipairs(members) do
  local separator = string.find(member, ':', 1, true)
  local payload = redis.call('HGET', ARGV[3] .. string.sub(member, 1, separator - 1), string.sub(member, separator + 1))
  if payload then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), member)
    payloads[#payloads + 1] = payload
  else
    redis.call('ZREM', KEYS[1], member)
  end
end
return payloads`;

export type HoldResult = { outcome: 'held' } | { outcome: 'insufficient'; available: bigint } | { outcome: 'unknown' };

export interface BalanceSnapshot {
  balance: bigint;
  version: bigint;
}

/**
 * The admission side of billing: an account's spendable balance as Redis sees it, and atomic holds
 * against it. Postgres stays the book of record; settlement pushes each new balance here, and a
 * version number keeps an older push from overwriting a newer one.
 */
@Injectable()
export class BalanceGate {
  constructor(@Inject(REDIS) private readonly redis: Redis) {
    this.redis.defineCommand('gatewayHold', { numberOfKeys: 3, lua: HOLD_SCRIPT });
    this.redis.defineCommand('gatewaySync', { numberOfKeys: 1, lua: SYNC_SCRIPT });
    this.redis.defineCommand('gatewayRelease', { numberOfKeys: 5, lua: RELEASE_SCRIPT });
    this.redis.defineCommand('gatewayRecordUsage', { numberOfKeys: 2, lua: RECORD_SCRIPT });
    this.redis.defineCommand('gatewayClaimUsage', { numberOfKeys: 1, lua: CLAIM_SCRIPT });
  }

  /** Reserves `amount` for `requestId` if the available balance covers it; a repeat of the same request is a no-op. */
  async hold(accountId: string, requestId: string, amount: bigint): Promise<HoldResult> {
    const [status, available] = (await this.command('gatewayHold')(
      snapshotKey(accountId),
      holdsKey(accountId),
      HOLD_INDEX,
      requestId,
      amount.toString(),
      Date.now().toString(),
      `${accountId}:${requestId}`,
    )) as [number, string];
    if (status === 1) {
      return { outcome: 'held' };
    }
    return status === 0 ? { outcome: 'insufficient', available: BigInt(available) } : { outcome: 'unknown' };
  }

  /**
   * Gives an unused hold back (idempotent); false when there was none, or when usage is recorded
   * for it: then settlement closes it.
   */
  async release(accountId: string, requestId: string): Promise<boolean> {
    const released = (await this.command('gatewayRelease')(
      ...releaseArgs(accountId, requestId, undefined, true),
    )) as number;
    return released === 1;
  }

  /** Closes settled holds and their recorded usage in one round trip, pushing each account's new balance. */
  async releaseMany(items: { accountId: string; requestId: string; snapshot?: BalanceSnapshot }[]): Promise<void> {
    const pipeline = this.redis.pipeline() as unknown as Record<string, (...args: string[]) => unknown> & {
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    for (const { accountId, requestId, snapshot } of items) {
      pipeline.gatewayRelease(...releaseArgs(accountId, requestId, snapshot));
    }
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (failed) {
      throw failed[0]!;
    }
  }

  /**
   * Records a completion's usage beside its hold, in one write: durable as soon as it returns, and
   * claimable by a settling worker at once.
   */
  async recordUsage(accountId: string, requestId: string, payload: string): Promise<void> {
    await this.command('gatewayRecordUsage')(
      usageKey(accountId),
      USAGE_INDEX,
      requestId,
      payload,
      `${accountId}:${requestId}`,
    );
  }

  /** The payload recorded for a request and not settled yet, or null. */
  recordedUsage(accountId: string, requestId: string): Promise<string | null> {
    return this.redis.hget(usageKey(accountId), requestId);
  }

  /**
   * Up to `limit` recorded usages (payload JSON) no other worker holds, now this caller's for
   * `leaseMs`. Settling one closes it for good (releaseMany); otherwise it comes back.
   */
  async claimUsage(limit: number, leaseMs: number): Promise<string[]> {
    return (await this.command('gatewayClaimUsage')(
      USAGE_INDEX,
      String(limit),
      String(leaseMs),
      USAGE_PREFIX,
    )) as string[];
  }

  /** Whether a worker holds a live lease on a request's recorded usage (it is settling it now). */
  async isClaimed(accountId: string, requestId: string): Promise<boolean> {
    const [claimableAt, [seconds, micros]] = await Promise.all([
      this.redis.zscore(USAGE_INDEX, `${accountId}:${requestId}`),
      this.redis.time(),
    ]);
    return claimableAt !== null && Number(claimableAt) > Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /** Records a balance read from Postgres, unless Redis already has a newer one. */
  async sync(accountId: string, snapshot: BalanceSnapshot): Promise<void> {
    await this.command('gatewaySync')(snapshotKey(accountId), snapshot.balance.toString(), snapshot.version.toString());
  }

  /** Holds opened before `olderThanMs` ago, as [accountId, requestId]. */
  async staleHolds(olderThanMs: number, limit: number, offset = 0): Promise<[string, string][]> {
    const oldest = Date.now() - olderThanMs;
    const members = await this.redis.zrangebyscore(HOLD_INDEX, '-inf', oldest, 'LIMIT', offset, limit);
    return members.map((member) => {
      const separator = member.indexOf(':');
      return [member.slice(0, separator), member.slice(separator + 1)];
    });
  }

  async reserved(accountId: string): Promise<bigint> {
    return BigInt((await this.redis.hget(snapshotKey(accountId), 'reserved')) ?? '0');
  }

  private command(name: string): (...args: string[]) => Promise<unknown> {
    return (this.redis as unknown as Record<string, (...args: string[]) => Promise<unknown>>)[name].bind(this.redis);
  }
}

/** Keys and arguments of RELEASE_SCRIPT for one hold. */
function releaseArgs(accountId: string, requestId: string, snapshot?: BalanceSnapshot, unusedOnly = false): string[] {
  return [
    snapshotKey(accountId),
    holdsKey(accountId),
    HOLD_INDEX,
    usageKey(accountId),
    USAGE_INDEX,
    requestId,
    `${accountId}:${requestId}`,
    snapshot?.balance.toString() ?? '',
    snapshot?.version.toString() ?? '',
    unusedOnly ? '1' : '0',
  ];
}
