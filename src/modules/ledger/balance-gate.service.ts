import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { AccountRegistry } from 'src/common/redis/account-registry';
import { inOneWrite } from 'src/common/redis/one-write';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { EncodedFunction } from 'src/common/redis/encoded-function';
import { runScript } from 'src/common/redis/run-script';
import {
  balanceKeys,
  HOLD_ACCOUNTS,
  holdKeys,
  keySpendField,
  OPENED_PATTERN,
} from 'src/modules/ledger/balance-gate.keys';
import {
  ADMIT_FUNCTION,
  ADMIT_SCRIPT,
  RESYNC_SCRIPT,
  STALE_HOLDS_SCRIPT,
  SYNC_KEY_SCRIPT,
  SYNC_SCRIPT,
} from 'src/modules/ledger/balance-gate.scripts';

export { holdKeys, keySpendField };

/** Accounts whose stale holds are read at once by the sweeper. */
const ACCOUNTS_AT_ONCE = 32;

export type HoldResult =
  | { outcome: 'held' }
  /** A counter refused the request (AdmissionCounts say which): nothing was held. */
  | { outcome: 'counterRefused' }
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

/**
 * Rate windows in the account's slot, counted in the same step as a hold (ADMIT_SCRIPT): the
 * requests' first, then the tokens', the first refusal answering.
 */
export interface AdmissionCounters {
  /** Fixed windows started by their first request, each `ttlMs` long: one request counts in each, unless one is full. */
  requests: { keys: string[]; limits: number[]; ttlMs: number };
  /** Clock-aligned windows: `amount` counts in each when the hold is taken, unless it would pass a limit. */
  tokens: { keys: string[]; limits: number[]; amount: number; ttlMs: number };
}

/** What the counters said. Indexes are 0-based into the counters' keys; -1: none refused. */
export interface AdmissionCounts {
  requests: { refusedBy: number; hits: number; resetMs: number };
  tokens: { refusedBy: number; used: number };
}

/** A hold taken (or refused) together with its counters. */
export interface CountedHold {
  hold: HoldResult;
  counts: AdmissionCounts;
}

/** No windows: a hold alone. */
const NO_COUNTERS: AdmissionCounters = {
  requests: { keys: [], limits: [], ttlMs: 0 },
  tokens: { keys: [], limits: [], amount: 0, ttlMs: 0 },
};

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
 * account's epoch, which changes whenever the Redis server holding the account restarts, so a Redis
 * that comes back older than Postgres (an AOF behind, a restored copy) has its balances reloaded
 * instead of trusted. A hold is closed beside the usage recorded for it (billing's
 * UsageQueueService), with the keys of holdKeys. Every key is in the account's slot
 * (balance-gate.keys.ts), so this runs on a Redis Cluster as on one Redis.
 */
@Injectable()
export class BalanceGateService {
  /** Whether this connection's check is done: admissions wait for it only just after a (re)connect. */
  private epochChecked = false;
  private epochWaiters: (() => void)[] = [];
  private connection = 0;
  /** Accounts that may have open holds, for the sweeper (account-registry.ts). */
  private readonly holdAccounts: AccountRegistry;
  /** Runs on every completion: encoded in one pass, a function where Redis has them (encoded-function.ts). */
  private readonly admitScript: EncodedFunction;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    // No fixed key count: the number of windows varies, so calls pass the count first.
    this.admitScript = EncodedFunction.define(this.redis, 'gatewayAdmit', ADMIT_SCRIPT, ADMIT_FUNCTION);
    this.redis.defineCommand('gatewaySync', { numberOfKeys: 2, lua: SYNC_SCRIPT });
    this.redis.defineCommand('gatewaySyncKeySpent', { numberOfKeys: 2, lua: SYNC_KEY_SCRIPT });
    this.redis.defineCommand('gatewayResync', { numberOfKeys: 2, lua: RESYNC_SCRIPT });
    this.redis.defineCommand('gatewayStaleHolds', { numberOfKeys: 2, lua: STALE_HOLDS_SCRIPT });
    this.holdAccounts = new AccountRegistry(redis, HOLD_ACCOUNTS);
    // Each (re)connection is checked before the first admission on it (a bounded wait, see hold).
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
   * any) its spent + open holds + this one; a repeat of the same request is a no-op. A hold with no
   * windows counted (requests are admitted by `admit`): for tests and tools that hold outside a request.
   */
  async hold(accountId: string, requestId: string, amount: bigint, key: HoldKey): Promise<HoldResult> {
    return (await this.admit(accountId, requestId, amount, key, NO_COUNTERS)).hold;
  }

  /**
   * The hold, with `counters` counted in the same step: a request whose windows refuse it is
   * not held ('counterRefused'); one refused by its balance or key stays counted in its request
   * windows, not in its token windows. When the snapshots must load first ('unknown',
   * 'keyUnknown'), nothing was counted.
   */
  async admit(
    accountId: string,
    requestId: string,
    amount: bigint,
    key: HoldKey,
    counters: AdmissionCounters,
  ): Promise<CountedHold> {
    if (!this.epochChecked) {
      await this.epochReady();
    }
    const { requests, tokens } = counters;
    const keys = [...holdKeys(accountId), ...requests.keys, ...tokens.keys];
    const reply = await this.admitScript.run<[number, string, number, number, number, number, number, number]>(
      this.redis,
      [
        keys.length,
        ...keys,
        requestId,
        amount.toString(),
        randomUUID(),
        key.id,
        key.spendLimit?.toString() ?? '',
        requests.keys.length,
        tokens.keys.length,
        requests.ttlMs,
        tokens.amount,
        tokens.ttlMs,
        ...requests.limits,
        ...tokens.limits,
      ],
    );
    const [status, available, first, requestsRefusedBy, hits, resetMs, tokensRefusedBy, used] = reply;
    const counts: AdmissionCounts = {
      requests: { refusedBy: requestsRefusedBy - 1, hits, resetMs },
      tokens: { refusedBy: tokensRefusedBy - 1, used },
    };
    return { hold: this.holdResult(accountId, status, available, first), counts };
  }

  private holdResult(accountId: string, status: number, available: string, first: number): HoldResult {
    switch (status) {
      case 1:
        if (first === 1) {
          // After the hold, never before (account-registry.ts). Not awaited: a lost registration only
          // delays the sweep of this hold, should it ever be orphaned, until the registry's repair.
          this.holdAccounts.register(accountId).catch((error: Error) => {
            this.logger.warn({ err: error.message, accountId }, 'could not register an account with open holds');
          });
        }
        return { outcome: 'held' };
      case 0:
        return { outcome: 'insufficient', available: BigInt(available) };
      case -5:
        return { outcome: 'counterRefused' };
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
  async syncKeySpent(accountId: string, keyId: string, spent: bigint): Promise<void> {
    const { keySpend, epoch } = balanceKeys(accountId);
    await runScript(this.redis, 'gatewaySyncKeySpent', keySpend, epoch, keyId, spent.toString(), randomUUID());
  }

  /** Records a balance read from Postgres, unless Redis already has a newer one of this epoch. */
  async sync(accountId: string, snapshot: BalanceSnapshot): Promise<void> {
    const { snapshot: snapshotKey, epoch } = balanceKeys(accountId);
    await runScript(
      this.redis,
      'gatewaySync',
      snapshotKey,
      epoch,
      snapshot.balance.toString(),
      snapshot.version.toString(),
      randomUUID(),
    );
  }

  /**
   * Pushes balances read from Postgres to the accounts whose Redis snapshot is older (a push that
   * failed), one script per account (each in its own slot), sent together; accounts with no
   * snapshot are left to load on admission. Returns how many were behind.
   */
  async resync(snapshots: Map<string, BalanceSnapshot>): Promise<number> {
    if (snapshots.size === 0) {
      return 0;
    }
    const behind = await inOneWrite(this.redis, () =>
      Promise.all(
        [...snapshots].map(([accountId, { balance, version }]) => {
          const { snapshot, epoch } = balanceKeys(accountId);
          return runScript<number>(
            this.redis,
            'gatewayResync',
            snapshot,
            epoch,
            balance.toString(),
            version.toString(),
            randomUUID(),
          );
        }),
      ),
    );
    return behind.reduce((sum, one) => sum + one, 0);
  }

  /**
   * Holds opened more than `olderThanMs` ago by Redis's clock, as [accountId, requestId], the
   * oldest first, from `offset`. Reads every account the registry lists (those that may have open
   * holds) and deregisters the ones that have none left.
   */
  async staleHolds(olderThanMs: number, limit: number, offset = 0): Promise<[string, string][]> {
    const listed = await this.holdAccounts.listed();
    const stale: { accountId: string; requestId: string; openedAt: number }[] = [];
    for (let start = 0; start < listed.length; start += ACCOUNTS_AT_ONCE) {
      const chunk = listed.slice(start, start + ACCOUNTS_AT_ONCE);
      const replies = await Promise.all(
        chunk.map(({ accountId }) => {
          const { opened, holds } = balanceKeys(accountId);
          return runScript<[number, ...string[]]>(this.redis, 'gatewayStaleHolds', opened, holds, String(olderThanMs));
        }),
      );
      await Promise.all(
        replies.map(async ([open, ...flat], index) => {
          const account = chunk[index];
          if (open === 0) {
            await this.holdAccounts.deregister(account);
          }
          for (let at = 0; at < flat.length; at += 2) {
            stale.push({ accountId: account.accountId, requestId: flat[at], openedAt: Number(flat[at + 1]) });
          }
        }),
      );
    }
    return stale
      .sort((a, b) => a.openedAt - b.openedAt)
      .slice(offset, offset + limit)
      .map(({ accountId, requestId }) => [accountId, requestId]);
  }

  /** Lists again every account that has open holds (for a registration lost with its process). */
  repairHoldRegistry(): Promise<number> {
    return this.holdAccounts.repair(OPENED_PATTERN);
  }

  /**
   * An account's open holds as Redis has them now (at most `limit`, the oldest first), with when
   * each was opened by Redis's clock. Holds live for one request each, so an account has at most
   * its concurrency cap of them; the limit bounds the answer anyway.
   */
  async openHolds(accountId: string, limit: number): Promise<OpenHold[]> {
    const { holds, opened } = balanceKeys(accountId);
    const [all, flat] = await Promise.all([this.redis.hgetall(holds), this.redis.zrange(opened, 0, -1, 'WITHSCORES')]);
    const openedAt = new Map<string, string>();
    for (let at = 0; at < flat.length; at += 2) {
      openedAt.set(flat[at], flat[at + 1]);
    }
    return Object.entries(all)
      .slice(0, limit)
      .map(([requestId, value]) => {
        const [amount, keyId] = value.split(':');
        const score = openedAt.get(requestId);
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
    return BigInt((await this.redis.hget(balanceKeys(accountId).snapshot, 'reserved')) ?? '0');
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

  /**
   * That the connection answers. Epochs are each account's own (ADMIT_SCRIPT stamps them with the
   * run id of the server holding the account): a restarted server is noticed by the first hold of
   * each account on it, not here.
   */
  private async checkEpoch(): Promise<void> {
    try {
      await this.redis.ping();
    } catch (error) {
      // Admissions go on; the next reconnection checks again.
      this.logger.error({ err: (error as Error).message }, 'could not check the Redis connection');
    }
  }
}
