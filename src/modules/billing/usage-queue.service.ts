import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { groupBy } from 'src/common/collections/group-by';
import { AccountRegistry, Listed } from 'src/common/redis/account-registry';
import { inOneWrite } from 'src/common/redis/one-write';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { EncodedScript } from 'src/common/redis/encoded-script';
import { runScript } from 'src/common/redis/run-script';
import { WindowCorrection } from 'src/common/redis/window-scripts';
import { DUE_PATTERN, USAGE_ACCOUNTS, usageKeys } from 'src/modules/billing/usage-queue.keys';
import {
  BACKLOG_SCRIPT,
  CORRECT_TOKENS_SCRIPT,
  CLAIM_SCRIPT,
  RECORD_SCRIPT,
  RELEASE_SETTLED_SCRIPT,
  RELEASE_UNUSED_SCRIPT,
  RETRY_LATER_SCRIPT,
} from 'src/modules/billing/usage-queue.scripts';
import { balanceKeys } from 'src/modules/ledger/balance-gate.keys';
import { BalanceSnapshot, holdKeys } from 'src/modules/ledger/balance-gate.service';

/** A failed settlement is tried again after this, doubling per attempt up to RETRY_MAX_MS, jittered. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 8_000;
/** Records read from each end of an account's due index when the worker's metrics look for the oldest. */
const BACKLOG_SAMPLE = 500;
/** Past this many failed attempts (about 2.5 minutes of them), a usage is tried once per lease only. */
const RETRY_FAST_ATTEMPTS = 24;
/** Recordings remembered at most for a registration their retry must make (see recordUsage). */
const MAX_UNLISTED = 10_000;
/** Accounts claimed from (or read for the metrics) at once; each is one script in its own slot. */
const ACCOUNTS_AT_ONCE = 16;
/** Settled holds one script closes at most: bounds how long one call keeps Redis from its other clients. */
const RELEASED_AT_ONCE = 100;

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
 * never given back unbilled (the hold's keys are the balance gate's: holdKeys). Each account's usage
 * lives in its own slot (usage-queue.keys.ts); workers find it through the registry of accounts
 * with recorded usage (account-registry.ts), so this runs on a Redis Cluster as on one Redis.
 */
@Injectable()
export class UsageQueueService {
  /** Accounts that may have recorded usage: where workers claim from. */
  private readonly accounts: AccountRegistry;
  /**
   * Recordings of this process whose account's registration failed: their retry registers it
   * whatever else the account has waiting by then. Few, and each leaves once a retry registers it.
   */
  private readonly unlisted = new Set<string>();
  /** Runs on every completion: encoded in one pass (encoded-script.ts). */
  private readonly recordScript: EncodedScript;

  constructor(@Inject(REDIS) private readonly redis: RedisClient) {
    this.redis.defineCommand('gatewayReleaseUnused', { numberOfKeys: 6, lua: RELEASE_UNUSED_SCRIPT });
    this.redis.defineCommand('gatewayReleaseSettled', { numberOfKeys: 8, lua: RELEASE_SETTLED_SCRIPT });
    // No fixed key count: the token windows corrected with a record vary.
    this.recordScript = EncodedScript.define(this.redis, 'gatewayRecordUsage', RECORD_SCRIPT);
    this.redis.defineCommand('gatewayClaimUsage', { numberOfKeys: 3, lua: CLAIM_SCRIPT });
    this.redis.defineCommand('gatewayRetryLater', { numberOfKeys: 2, lua: RETRY_LATER_SCRIPT });
    this.redis.defineCommand('gatewayUsageBacklog', { numberOfKeys: 2, lua: BACKLOG_SCRIPT });
    this.redis.defineCommand('gatewayTpmCorrect', { lua: CORRECT_TOKENS_SCRIPT });
    this.accounts = new AccountRegistry(redis, USAGE_ACCOUNTS);
  }

  /** Corrects token windows counted at admission by `correction.delta` (never below zero). */
  correctTokens(correction: WindowCorrection): Promise<unknown> {
    const { keys, delta } = correction;
    return runScript(this.redis, 'gatewayTpmCorrect', keys.length, ...keys, String(delta));
  }

  /**
   * Usage recorded and not settled yet, and the age (Redis's clock minus the API's at recording) of
   * the oldest of it, or null when none carries a recording time. One bounded script per account
   * listed as having recorded usage: for metrics.
   */
  async backlog(): Promise<{ count: number; oldestAgeMs: number | null }> {
    let count = 0;
    let oldestAgeMs = -1;
    const listed = await this.accounts.listed();
    for (let start = 0; start < listed.length; start += ACCOUNTS_AT_ONCE) {
      const replies = await Promise.all(
        listed.slice(start, start + ACCOUNTS_AT_ONCE).map(({ accountId }) => {
          const { usage, due } = usageKeys(accountId);
          return runScript<[number, number]>(this.redis, 'gatewayUsageBacklog', usage, due, String(BACKLOG_SAMPLE));
        }),
      );
      for (const [waiting, age] of replies) {
        count += waiting;
        oldestAgeMs = Math.max(oldestAgeMs, age);
      }
    }
    return { count, oldestAgeMs: oldestAgeMs < 0 ? null : oldestAgeMs };
  }

  /**
   * Records a completion's usage beside its hold: durable as soon as the script returns, and
   * claimable by a settling worker at once. An account that had none waiting is then registered
   * (after the record, never before: account-registry.ts); a failed registration fails the
   * recording, which the recorder tries again (both steps are idempotent), registering then
   * whatever the account has waiting, or settles in Postgres. A recording that failed may still
   * have run (its reply was lost): the account is registered then too, after the failure, so a
   * worker finds such a record and closes it. `correction` (the request's token windows) is made in
   * the same script, once however often the recording is tried.
   */
  async recordUsage(
    accountId: string,
    requestId: string,
    payload: string,
    correction: WindowCorrection | null = null,
  ): Promise<void> {
    const { usage, due } = usageKeys(accountId);
    const keys = [usage, due, balanceKeys(accountId).holds, ...(correction?.keys ?? [])];
    const delta = String(correction?.delta ?? 0);
    let waiting: number;
    try {
      waiting = await this.recordScript.run<number>(this.redis, [keys.length, ...keys, requestId, payload, delta]);
    } catch (error) {
      await this.register(accountId, requestId).catch(() => undefined);
      throw error;
    }
    if (waiting === 1 || this.unlisted.has(requestId)) {
      await this.register(accountId, requestId);
    }
  }

  /** Registers the account of a recording; remembers the recording while that fails, for its retry. */
  private async register(accountId: string, requestId: string): Promise<void> {
    try {
      await this.accounts.register(accountId);
      this.unlisted.delete(requestId);
    } catch (error) {
      // Bounded: past it (a long outage), the workers' repair lists what a retry would have.
      if (this.unlisted.size < MAX_UNLISTED) {
        this.unlisted.add(requestId);
      }
      throw error;
    }
  }

  /** The payload recorded for a request and not settled yet, or null. */
  recordedUsage(accountId: string, requestId: string): Promise<string | null> {
    return this.redis.hget(usageKeys(accountId).usage, requestId);
  }

  /**
   * Up to about `limit` recorded usages (payload JSON) no other worker holds, now this caller's for
   * `leaseMs`. Settling one closes it for good (releaseMany); otherwise it comes back. Claims from
   * the registered accounts a few at a time, sharing what is left of `limit` among them, and
   * deregisters those with nothing left at all.
   */
  async claimUsage(limit: number, leaseMs: number): Promise<string[]> {
    const payloads: string[] = [];
    let candidates = await this.accounts.listed();
    while (payloads.length < limit && candidates.length > 0) {
      const round = candidates.slice(0, ACCOUNTS_AT_ONCE);
      const share = Math.ceil((limit - payloads.length) / round.length);
      const replies = await Promise.all(round.map((account) => this.claimFrom(account, share, leaseMs)));
      // An account that filled its share may have more: it stays a candidate for the next round.
      const more = round.filter((_, index) => replies[index].length === share);
      replies.forEach((claimed) => payloads.push(...claimed));
      candidates = [...more, ...candidates.slice(ACCOUNTS_AT_ONCE)];
    }
    return payloads;
  }

  private async claimFrom(account: Listed, limit: number, leaseMs: number): Promise<string[]> {
    const { usage, due, attempts } = usageKeys(account.accountId);
    const [left, ...payloads] = await runScript<[number, ...string[]]>(
      this.redis,
      'gatewayClaimUsage',
      usage,
      due,
      attempts,
      String(limit),
      String(leaseMs),
    );
    if (left === 0) {
      await this.accounts.deregister(account);
    }
    return payloads;
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
    const delays = await Promise.all(
      [...groupBy(failed, (usage) => usage.accountId)].map(([accountId, usages]) => {
        const { due, attempts } = usageKeys(accountId);
        const requests = usages.flatMap(({ requestId, databaseUnavailable }) => [
          requestId,
          String(500 + Math.floor(Math.random() * 501)),
          databaseUnavailable ? '1' : '0',
        ]);
        return runScript<number>(
          this.redis,
          'gatewayRetryLater',
          due,
          attempts,
          String(RETRY_FIRST_MS),
          String(RETRY_MAX_MS),
          String(RETRY_FAST_ATTEMPTS),
          String(slowMs),
          ...requests,
        );
      }),
    );
    const set = delays.filter((delay) => delay >= 0);
    return set.length > 0 ? Math.min(...set) : null;
  }

  /** Whether a worker holds a live lease on a request's recorded usage (it is settling it now). */
  async isClaimed(accountId: string, requestId: string): Promise<boolean> {
    const [claimableAt, [seconds, micros]] = await Promise.all([
      this.redis.zscore(usageKeys(accountId).due, requestId),
      this.redis.time(),
    ]);
    return claimableAt !== null && Number(claimableAt) > Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /**
   * Gives an unused hold back (idempotent); false when there was none, or when usage is recorded
   * for it: then settlement closes it.
   */
  async release(accountId: string, requestId: string): Promise<boolean> {
    const { usage } = usageKeys(accountId);
    const released = await runScript<number>(
      this.redis,
      'gatewayReleaseUnused',
      ...holdKeys(accountId),
      usage,
      requestId,
    );
    return released === 1;
  }

  /**
   * Closes settled holds and their recorded usage, pushing each account's new balance and each
   * key's settled spent: one script per account (and per RELEASED_AT_ONCE of its holds), each in its
   * account's slot, sent together.
   */
  async releaseMany(items: SettledHold[]): Promise<void> {
    const results = await inOneWrite(this.redis, () =>
      Promise.allSettled(settledReleases(items).map((args) => runScript(this.redis, 'gatewayReleaseSettled', ...args))),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) {
      throw failed.reason;
    }
  }

  /** Lists again every account that has recorded usage (for a registration lost with its process). */
  repairRegistry(): Promise<number> {
    return this.accounts.repair(DUE_PATTERN);
  }
}

export interface SettledHold {
  accountId: string;
  requestId: string;
  snapshot?: BalanceSnapshot;
  /** The key's spent as settled in Postgres, to push beside the release. */
  keySpent?: { keyId: string; spent: bigint };
}

/**
 * RELEASE_SETTLED_SCRIPT's keys and arguments: one call per account and per RELEASED_AT_ONCE of its
 * holds. A balance or a key's spent only moves forward (a push applies when its version, or the spent,
 * is higher), so pushing an account's newest once does what pushing each hold's would.
 */
function settledReleases(items: SettledHold[]): string[][] {
  const calls: string[][] = [];
  for (const [accountId, holds] of groupBy(items, (item) => item.accountId)) {
    let snapshot: BalanceSnapshot | undefined;
    const spent = new Map<string, bigint>();
    for (const hold of holds) {
      if (hold.snapshot && (!snapshot || hold.snapshot.version > snapshot.version)) {
        snapshot = hold.snapshot;
      }
      if (hold.keySpent && hold.keySpent.spent > (spent.get(hold.keySpent.keyId) ?? -1n)) {
        spent.set(hold.keySpent.keyId, hold.keySpent.spent);
      }
    }
    const { usage, due, attempts } = usageKeys(accountId);
    const head = [
      ...holdKeys(accountId),
      usage,
      due,
      attempts,
      snapshot?.balance.toString() ?? '',
      snapshot?.version.toString() ?? '',
      snapshot || spent.size > 0 ? randomUUID() : '',
      String(spent.size),
      ...[...spent].flatMap(([keyId, keySpent]) => [keyId, keySpent.toString()]),
    ];
    for (let start = 0; start < holds.length; start += RELEASED_AT_ONCE) {
      calls.push([...head, ...holds.slice(start, start + RELEASED_AT_ONCE).map((hold) => hold.requestId)]);
    }
  }
  return calls;
}
