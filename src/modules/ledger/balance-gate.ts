import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { REDIS } from 'src/common/redis/redis.tokens';
import {
  CHECK_EPOCH_SCRIPT,
  CLAIM_SCRIPT,
  HOLD_SCRIPT,
  RECORD_SCRIPT,
  RELEASE_SCRIPT,
  RESYNC_SCRIPT,
  RETRY_LATER_SCRIPT,
  STALE_HOLDS_SCRIPT,
  SYNC_SCRIPT,
} from 'src/modules/ledger/balance-gate.scripts';

const SNAPSHOT_PREFIX = 'gw:bal:';
const snapshotKey = (accountId: string) => `${SNAPSHOT_PREFIX}${accountId}`;
const holdsKey = (accountId: string) => `gw:holds:${accountId}`;
const HOLD_INDEX = 'gw:holds:index';
const USAGE_PREFIX = 'gw:usage:';
const usageKey = (accountId: string) => `${USAGE_PREFIX}${accountId}`;
const USAGE_INDEX = 'gw:usage:index';
const USAGE_ATTEMPTS = 'gw:usage:attempts';
const EPOCH_KEY = 'gw:epoch';

export type HoldResult = { outcome: 'held' } | { outcome: 'insufficient'; available: bigint } | { outcome: 'unknown' };

export interface RetriedUsage {
  accountId: string;
  requestId: string;
  /** The attempt failed because the database was unavailable, not because of this usage. */
  databaseUnavailable?: boolean;
}

export interface BalanceSnapshot {
  balance: bigint;
  version: bigint;
}

/** A failed settlement is tried again after this, doubling per attempt up to RETRY_MAX_MS, jittered. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 8_000;
/** Past this many failed attempts (about 2.5 minutes of them), a usage is tried once per lease only. */
const RETRY_FAST_ATTEMPTS = 24;
/** How long an admission waits for a connection (and its epoch check) before Redis counts as down. */
const EPOCH_WAIT_MS = 2_000;

/**
 * The admission side of billing: an account's spendable balance as Redis sees it, and atomic holds
 * against it. Postgres stays the book of record; settlement pushes each new balance here, and a
 * version number keeps an older push from overwriting a newer one. Snapshots are stamped with the
 * Redis epoch, which changes whenever Redis restarts, so a Redis that comes back older than Postgres
 * (an AOF behind, a restored copy) has every balance reloaded instead of trusted.
 */
@Injectable()
export class BalanceGate {
  /** Whether this connection's epoch check is done: admissions wait for it only just after a (re)connect. */
  private epochChecked = false;
  private epochWaiters: (() => void)[] = [];
  private connection = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.redis.defineCommand('gatewayHold', { numberOfKeys: 4, lua: HOLD_SCRIPT });
    this.redis.defineCommand('gatewaySync', { numberOfKeys: 2, lua: SYNC_SCRIPT });
    this.redis.defineCommand('gatewayResync', { numberOfKeys: 1, lua: RESYNC_SCRIPT });
    this.redis.defineCommand('gatewayCheckEpoch', { numberOfKeys: 1, lua: CHECK_EPOCH_SCRIPT });
    this.redis.defineCommand('gatewayRelease', { numberOfKeys: 7, lua: RELEASE_SCRIPT });
    this.redis.defineCommand('gatewayRecordUsage', { numberOfKeys: 2, lua: RECORD_SCRIPT });
    this.redis.defineCommand('gatewayClaimUsage', { numberOfKeys: 2, lua: CLAIM_SCRIPT });
    this.redis.defineCommand('gatewayRetryLater', { numberOfKeys: 2, lua: RETRY_LATER_SCRIPT });
    this.redis.defineCommand('gatewayStaleHolds', { numberOfKeys: 1, lua: STALE_HOLDS_SCRIPT });
    // Each (re)connection may reach a restarted Redis: checked before the first admission on it.
    this.redis.on('ready', () => this.startEpochCheck());
    this.redis.on('close', () => {
      this.epochChecked = false;
      this.connection++;
    });
    if (this.redis.status === 'ready') {
      this.startEpochCheck();
    }
  }

  /** Reserves `amount` for `requestId` if the available balance covers it; a repeat of the same request is a no-op. */
  async hold(accountId: string, requestId: string, amount: bigint): Promise<HoldResult> {
    if (!this.epochChecked) {
      await this.epochReady();
    }
    const [status, available] = (await this.command('gatewayHold')(
      snapshotKey(accountId),
      holdsKey(accountId),
      HOLD_INDEX,
      EPOCH_KEY,
      requestId,
      amount.toString(),
      `${accountId}:${requestId}`,
      randomUUID(),
    )) as [number, string];
    if (status === 1) {
      return { outcome: 'held' };
    }
    if (status === -2) {
      this.logger.warn('new Redis epoch (Redis restarted): balance snapshots reload from Postgres');
      return { outcome: 'unknown' };
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
      USAGE_ATTEMPTS,
      String(limit),
      String(leaseMs),
      USAGE_PREFIX,
    )) as string[];
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
      `${accountId}:${requestId}`,
      String(500 + Math.floor(Math.random() * 501)),
      databaseUnavailable ? '1' : '0',
    ]);
    const soonest = (await this.command('gatewayRetryLater')(
      USAGE_INDEX,
      USAGE_ATTEMPTS,
      String(RETRY_FIRST_MS),
      String(RETRY_MAX_MS),
      String(RETRY_FAST_ATTEMPTS),
      String(slowMs),
      ...members,
    )) as number;
    return soonest < 0 ? null : soonest;
  }

  /** Whether a worker holds a live lease on a request's recorded usage (it is settling it now). */
  async isClaimed(accountId: string, requestId: string): Promise<boolean> {
    const [claimableAt, [seconds, micros]] = await Promise.all([
      this.redis.zscore(USAGE_INDEX, `${accountId}:${requestId}`),
      this.redis.time(),
    ]);
    return claimableAt !== null && Number(claimableAt) > Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /** Records a balance read from Postgres, unless Redis already has a newer one of this epoch. */
  async sync(accountId: string, snapshot: BalanceSnapshot): Promise<void> {
    await this.command('gatewaySync')(
      snapshotKey(accountId),
      EPOCH_KEY,
      snapshot.balance.toString(),
      snapshot.version.toString(),
      randomUUID(),
    );
  }

  /**
   * Pushes balances read from Postgres to the accounts whose Redis snapshot is older (a push that
   * failed), in one round trip; accounts with no snapshot are left to load on admission. Returns
   * how many were behind.
   */
  async resync(snapshots: Map<string, BalanceSnapshot>): Promise<number> {
    if (snapshots.size === 0) {
      return 0;
    }
    const args = [...snapshots].flatMap(([accountId, { balance, version }]) => [
      accountId,
      balance.toString(),
      version.toString(),
    ]);
    return (await this.command('gatewayResync')(EPOCH_KEY, SNAPSHOT_PREFIX, randomUUID(), ...args)) as number;
  }

  /** Holds opened more than `olderThanMs` ago by Redis's clock, as [accountId, requestId]. */
  async staleHolds(olderThanMs: number, limit: number, offset = 0): Promise<[string, string][]> {
    const members = (await this.command('gatewayStaleHolds')(
      HOLD_INDEX,
      String(olderThanMs),
      String(offset),
      String(limit),
    )) as string[];
    return members.map((member) => {
      const separator = member.indexOf(':');
      return [member.slice(0, separator), member.slice(separator + 1)];
    });
  }

  async reserved(accountId: string): Promise<bigint> {
    return BigInt((await this.redis.hget(snapshotKey(accountId), 'reserved')) ?? '0');
  }

  /** Waits (boundedly) for the epoch check of a connection that is being made or was just made. */
  private async epochReady(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let waiter: () => void = () => undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        waiter = resolve;
        this.epochWaiters.push(resolve);
        timer = setTimeout(() => reject(new Error('Redis is not connected')), EPOCH_WAIT_MS);
      });
    } finally {
      clearTimeout(timer);
      this.epochWaiters = this.epochWaiters.filter((other) => other !== waiter);
    }
  }

  private startEpochCheck(): void {
    const connection = this.connection;
    void this.checkEpoch().then(() => {
      // The connection may have dropped meanwhile: the next one checks again.
      if (connection === this.connection && this.redis.status === 'ready') {
        this.epochChecked = true;
        const waiters = this.epochWaiters;
        this.epochWaiters = [];
        waiters.forEach((resolve) => resolve());
      }
    });
  }

  /** A new epoch if Redis restarted since the current one was made (see CHECK_EPOCH_SCRIPT). */
  private async checkEpoch(): Promise<void> {
    try {
      const info = await this.redis.info('server');
      const runId = /^run_id:(\w+)/m.exec(info)?.[1] ?? randomUUID();
      const rotated = (await this.command('gatewayCheckEpoch')(EPOCH_KEY, runId, randomUUID())) as number;
      if (rotated === 1) {
        this.logger.warn('new Redis epoch (first start, or Redis restarted): balance snapshots reload from Postgres');
      }
    } catch (error) {
      // Admissions go on against the current epoch; the next reconnection checks again.
      this.logger.error({ err: (error as Error).message }, 'could not check the Redis epoch');
    }
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
    USAGE_ATTEMPTS,
    EPOCH_KEY,
    requestId,
    `${accountId}:${requestId}`,
    snapshot?.balance.toString() ?? '',
    snapshot?.version.toString() ?? '',
    unusedOnly ? '1' : '0',
    snapshot ? randomUUID() : '',
  ];
}
