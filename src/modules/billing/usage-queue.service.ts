import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { REDIS } from 'src/common/redis/redis.tokens';
import { runScript } from 'src/common/redis/run-script';
import {
  BACKLOG_SCRIPT,
  CLAIM_SCRIPT,
  RECORD_SCRIPT,
  RELEASE_SCRIPT,
  RETRY_LATER_SCRIPT,
} from 'src/modules/billing/usage-queue.scripts';
import { BalanceSnapshot, holdKeys, holdMember } from 'src/modules/ledger/balance-gate.service';

const USAGE_PREFIX = 'gw:usage:';
const usageKey = (accountId: string) => `${USAGE_PREFIX}${accountId}`;
const USAGE_INDEX = 'gw:usage:index';
const USAGE_ATTEMPTS = 'gw:usage:attempts';

/** A failed settlement is tried again after this, doubling per attempt up to RETRY_MAX_MS, jittered. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 8_000;
/** Records read from each end of the index when the worker's metrics look for the oldest. */
const BACKLOG_SAMPLE = 500;
/** Past this many failed attempts (about 2.5 minutes of them), a usage is tried once per lease only. */
const RETRY_FAST_ATTEMPTS = 24;

export interface RetriedUsage {
  accountId: string;
  requestId: string;
  /** The attempt failed because the database was unavailable, not because of this usage. */
  databaseUnavailable?: boolean;
}

/**
 * Completions' usage recorded in Redis until a worker settles it: recorded beside the request's hold
 * by the API, claimed by workers under a lease, given back with a backoff when settling failed. A
 * hold and its recorded usage close together, in one script, so that a hold with usage recorded is
 * never given back unbilled (the hold's keys are the balance gate's: holdKeys).
 */
@Injectable()
export class UsageQueueService {
  constructor(@Inject(REDIS) private readonly redis: Redis) {
    this.redis.defineCommand('gatewayRelease', { numberOfKeys: 7, lua: RELEASE_SCRIPT });
    this.redis.defineCommand('gatewayRecordUsage', { numberOfKeys: 2, lua: RECORD_SCRIPT });
    this.redis.defineCommand('gatewayClaimUsage', { numberOfKeys: 2, lua: CLAIM_SCRIPT });
    this.redis.defineCommand('gatewayRetryLater', { numberOfKeys: 2, lua: RETRY_LATER_SCRIPT });
    this.redis.defineCommand('gatewayUsageBacklog', { numberOfKeys: 1, lua: BACKLOG_SCRIPT });
  }

  /**
   * Usage recorded and not settled yet, and the age (Redis's clock minus the API's at recording) of
   * the oldest of it, or null when none carries a recording time. One bounded script: for metrics.
   */
  async backlog(): Promise<{ count: number; oldestAgeMs: number | null }> {
    const [count, oldestAgeMs] = await runScript<[number, number]>(
      this.redis,
      'gatewayUsageBacklog',
      USAGE_INDEX,
      String(BACKLOG_SAMPLE),
      USAGE_PREFIX,
    );
    return { count, oldestAgeMs: oldestAgeMs < 0 ? null : oldestAgeMs };
  }

  /**
   * Records a completion's usage beside its hold, in one write: durable as soon as it returns, and
   * claimable by a settling worker at once.
   */
  async recordUsage(accountId: string, requestId: string, payload: string): Promise<void> {
    await runScript(
      this.redis,
      'gatewayRecordUsage',
      usageKey(accountId),
      USAGE_INDEX,
      requestId,
      payload,
      holdMember(accountId, requestId),
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
    return await runScript<string[]>(
      this.redis,
      'gatewayClaimUsage',
      USAGE_INDEX,
      USAGE_ATTEMPTS,
      String(limit),
      String(leaseMs),
      USAGE_PREFIX,
    );
  }

  /**
   * Gives claims whose settlement failed back before their lease ends: claimable again in 0.5 s,
   * doubling per failed attempt up to 8 s, jittered (50–100 %, in whole per-mille so no fraction
   * crosses into Redis) so that workers do not retry in step. Returns
   * the soonest of those delays in ms, or null when none was set. After RETRY_FAST_ATTEMPTS, once
   * per `slowMs` (the lease): a payload that can never be stored is not retried every 8 s forever.
   * Failures marked `databaseUnavailable` never reach that: an outage of any length is retried
   * every 8 s at most, so its usage settles within seconds of the database coming back.
   */
  async retryLater(failed: RetriedUsage[], slowMs: number): Promise<number | null> {
    if (failed.length === 0) {
      return null;
    }
    const members = failed.flatMap(({ accountId, requestId, databaseUnavailable }) => [
      holdMember(accountId, requestId),
      String(500 + Math.floor(Math.random() * 501)),
      databaseUnavailable ? '1' : '0',
    ]);
    const soonest = await runScript<number>(
      this.redis,
      'gatewayRetryLater',
      USAGE_INDEX,
      USAGE_ATTEMPTS,
      String(RETRY_FIRST_MS),
      String(RETRY_MAX_MS),
      String(RETRY_FAST_ATTEMPTS),
      String(slowMs),
      ...members,
    );
    return soonest < 0 ? null : soonest;
  }

  /** Whether a worker holds a live lease on a request's recorded usage (it is settling it now). */
  async isClaimed(accountId: string, requestId: string): Promise<boolean> {
    const [claimableAt, [seconds, micros]] = await Promise.all([
      this.redis.zscore(USAGE_INDEX, holdMember(accountId, requestId)),
      this.redis.time(),
    ]);
    return claimableAt !== null && Number(claimableAt) > Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /**
   * Gives an unused hold back (idempotent); false when there was none, or when usage is recorded
   * for it: then settlement closes it.
   */
  async release(accountId: string, requestId: string): Promise<boolean> {
    const released = await runScript<number>(
      this.redis,
      'gatewayRelease',
      ...releaseArgs(accountId, requestId, undefined, true),
    );
    return released === 1;
  }

  /**
   * Closes settled holds and their recorded usage in one round trip, pushing each account's new
   * balance and each key's settled spent.
   */
  async releaseMany(items: SettledHold[]): Promise<void> {
    const pipeline = this.redis.pipeline() as unknown as Record<string, (...args: string[]) => unknown> & {
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    for (const { accountId, requestId, snapshot, keySpent } of items) {
      pipeline.gatewayRelease(...releaseArgs(accountId, requestId, snapshot, false, keySpent));
    }
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (failed) {
      throw failed[0]!;
    }
  }
}

export interface SettledHold {
  accountId: string;
  requestId: string;
  snapshot?: BalanceSnapshot;
  /** The key's spent as settled in Postgres, to push beside the release. */
  keySpent?: { keyId: string; spent: bigint };
}

/** Keys and arguments of RELEASE_SCRIPT for one hold. */
function releaseArgs(
  accountId: string,
  requestId: string,
  snapshot?: BalanceSnapshot,
  unusedOnly = false,
  keySpent?: SettledHold['keySpent'],
): string[] {
  return [
    ...holdKeys(accountId),
    usageKey(accountId),
    USAGE_INDEX,
    USAGE_ATTEMPTS,
    requestId,
    holdMember(accountId, requestId),
    snapshot?.balance.toString() ?? '',
    snapshot?.version.toString() ?? '',
    unusedOnly ? '1' : '0',
    snapshot || keySpent ? randomUUID() : '',
    keySpent?.keyId ?? '',
    keySpent?.spent.toString() ?? '',
  ];
}
