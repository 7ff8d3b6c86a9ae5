import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { REDIS } from 'src/common/redis/redis.tokens';
import { runScript } from 'src/common/redis/run-script';
import {
  CHECK_EPOCH_SCRIPT,
  HOLD_SCRIPT,
  KEY_SPEND_PREFIX,
  RESYNC_SCRIPT,
  STALE_HOLDS_SCRIPT,
  SYNC_KEY_SCRIPT,
  SYNC_SCRIPT,
} from 'src/modules/ledger/balance-gate.scripts';

const SNAPSHOT_PREFIX = 'gw:bal:';
const snapshotKey = (accountId: string) => `${SNAPSHOT_PREFIX}${accountId}`;
const holdsKey = (accountId: string) => `gw:holds:${accountId}`;
const HOLD_INDEX = 'gw:holds:index';
const EPOCH_KEY = 'gw:epoch';
/** A key's snapshot: what it spent (settled) and its open holds. */
export const keySpendKey = (keyId: string) => `${KEY_SPEND_PREFIX}${keyId}`;

/**
 * The keys of an account's holds, in the order the scripts take them (HOLD_SCRIPT, and billing's
 * scripts that close a hold with CLOSE_HOLD and SYNC_SNAPSHOT): its snapshot, its holds, the index
 * of all holds, the epoch.
 */
export function holdKeys(accountId: string): [string, string, string, string] {
  return [snapshotKey(accountId), holdsKey(accountId), HOLD_INDEX, EPOCH_KEY];
}

/** A hold's (and its recorded usage's) member in the indexes of all holds and of all recorded usage. */
export const holdMember = (accountId: string, requestId: string) => `${accountId}:${requestId}`;

export type HoldResult =
  | { outcome: 'held' }
  | { outcome: 'insufficient'; available: bigint }
  | { outcome: 'keyLimitReached'; left: bigint }
  /** Redis has no balance snapshot of this epoch for the account: load it from Postgres. */
  | { outcome: 'unknown' }
  /** Redis has no spent snapshot of this epoch for the key (only asked when it has a limit). */
  | { outcome: 'keyUnknown' };

/** One request's reservation, as Redis keeps it until its usage is recorded. */
export interface OpenHold {
  requestId: string;
  keyId: string | null;
  /** Nano-dollars held. */
  amount: bigint;
  /** By Redis's clock; null if the index has no entry for it (never expected). */
  openedAt: Date | null;
}

/** The key a hold is made through, and its spend limit (nano-dollars; null: none). */
export interface HoldKey {
  id: string;
  spendLimit: bigint | null;
}

export interface BalanceSnapshot {
  balance: bigint;
  version: bigint;
}

/** How long an admission waits for a connection (and its epoch check) before Redis counts as down. */
const EPOCH_WAIT_MS = 2_000;

/**
 * The admission side of billing: an account's spendable balance as Redis sees it, and atomic holds
 * against it. Postgres stays the book of record; settlement pushes each new balance here, and a
 * version number keeps an older push from overwriting a newer one. Snapshots are stamped with the
 * Redis epoch, which changes whenever Redis restarts, so a Redis that comes back older than Postgres
 * (an AOF behind, a restored copy) has every balance reloaded instead of trusted. A hold is closed
 * beside the usage recorded for it (billing's UsageQueueService), with the keys of holdKeys.
 */
@Injectable()
export class BalanceGateService {
  /** Whether this connection's epoch check is done: admissions wait for it only just after a (re)connect. */
  private epochChecked = false;
  private epochWaiters: (() => void)[] = [];
  private connection = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.redis.defineCommand('gatewayHold', { numberOfKeys: 5, lua: HOLD_SCRIPT });
    this.redis.defineCommand('gatewaySync', { numberOfKeys: 2, lua: SYNC_SCRIPT });
    this.redis.defineCommand('gatewaySyncKeySpent', { numberOfKeys: 2, lua: SYNC_KEY_SCRIPT });
    this.redis.defineCommand('gatewayResync', { numberOfKeys: 1, lua: RESYNC_SCRIPT });
    this.redis.defineCommand('gatewayCheckEpoch', { numberOfKeys: 1, lua: CHECK_EPOCH_SCRIPT });
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

  /**
   * Reserves `amount` for `requestId` if the available balance covers it, and the key's limit (if
   * any) its spent + open holds + this one; a repeat of the same request is a no-op.
   */
  async hold(accountId: string, requestId: string, amount: bigint, key: HoldKey): Promise<HoldResult> {
    if (!this.epochChecked) {
      await this.epochReady();
    }
    const [status, available] = await runScript<[number, string]>(
      this.redis,
      'gatewayHold',
      ...holdKeys(accountId),
      keySpendKey(key.id),
      requestId,
      amount.toString(),
      holdMember(accountId, requestId),
      randomUUID(),
      key.id,
      key.spendLimit?.toString() ?? '',
    );
    switch (status) {
      case 1:
        return { outcome: 'held' };
      case 0:
        return { outcome: 'insufficient', available: BigInt(available) };
      case -4:
        return { outcome: 'keyLimitReached', left: BigInt(available) };
      case -3:
        return { outcome: 'keyUnknown' };
      case -2:
        this.logger.warn('new Redis epoch (Redis restarted): balance snapshots reload from Postgres');
        return { outcome: 'unknown' };
      default:
        return { outcome: 'unknown' };
    }
  }

  /** Records a key's spent read from Postgres, unless Redis already has a higher one of this epoch. */
  async syncKeySpent(keyId: string, spent: bigint): Promise<void> {
    await runScript(this.redis, 'gatewaySyncKeySpent', keySpendKey(keyId), EPOCH_KEY, spent.toString(), randomUUID());
  }

  /** Records a balance read from Postgres, unless Redis already has a newer one of this epoch. */
  async sync(accountId: string, snapshot: BalanceSnapshot): Promise<void> {
    await runScript(
      this.redis,
      'gatewaySync',
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
    return await runScript<number>(this.redis, 'gatewayResync', EPOCH_KEY, SNAPSHOT_PREFIX, randomUUID(), ...args);
  }

  /** Holds opened more than `olderThanMs` ago by Redis's clock, as [accountId, requestId]. */
  async staleHolds(olderThanMs: number, limit: number, offset = 0): Promise<[string, string][]> {
    const members = await runScript<string[]>(
      this.redis,
      'gatewayStaleHolds',
      HOLD_INDEX,
      String(olderThanMs),
      String(offset),
      String(limit),
    );
    return members.map((member) => {
      const separator = member.indexOf(':');
      return [member.slice(0, separator), member.slice(separator + 1)];
    });
  }

  /**
   * An account's open holds as Redis has them now (at most `limit`, the oldest first), with when
   * each was opened by Redis's clock. Holds live for one request each, so an account has at most
   * its concurrency cap of them; the limit bounds the answer anyway.
   */
  async openHolds(accountId: string, limit: number): Promise<OpenHold[]> {
    const [, holds] = holdKeys(accountId);
    const entries = Object.entries(await this.redis.hgetall(holds)).slice(0, limit);
    const pipeline = this.redis.pipeline();
    entries.forEach(([requestId]) => pipeline.zscore(HOLD_INDEX, holdMember(accountId, requestId)));
    const openedAt = entries.length > 0 ? ((await pipeline.exec()) ?? []) : [];
    return entries
      .map(([requestId, value], index) => {
        const [amount, keyId] = value.split(':');
        const score = openedAt[index]?.[1] as string | null | undefined;
        return {
          requestId,
          keyId: keyId || null,
          amount: BigInt(amount),
          openedAt: score ? new Date(Number(score)) : null,
        };
      })
      .sort((a, b) => (a.openedAt?.getTime() ?? 0) - (b.openedAt?.getTime() ?? 0));
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
      const rotated = await runScript<number>(this.redis, 'gatewayCheckEpoch', EPOCH_KEY, runId, randomUUID());
      if (rotated === 1) {
        this.logger.warn('new Redis epoch (first start, or Redis restarted): balance snapshots reload from Postgres');
      }
    } catch (error) {
      // Admissions go on against the current epoch; the next reconnection checks again.
      this.logger.error({ err: (error as Error).message }, 'could not check the Redis epoch');
    }
  }
}
