import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { ApiKeyPrincipal, AuthKind } from 'src/common/decorators/auth.decorators';
import { GroupTerms } from 'src/common/http/principal';
import { LOGGER } from 'src/common/logging/logger';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ApiKeyStatus, KeyDisabler } from 'src/modules/api-keys/api-key.entity';
import { hashApiKey, isIssuableApiKey, parseBearerKey } from 'src/modules/api-keys/api-key.secret';
import { ApiKeysRepository } from 'src/modules/api-keys/api-keys.repository';
import { LookupBudget } from 'src/modules/api-keys/lookup-budget';

interface KnownKey {
  id: string;
  accountId: string;
  status: ApiKeyStatus;
  disabledBy: KeyDisabler | null;
  expiresAt: Date | null;
  allowedModels: string[] | null;
  spendLimit: bigint | null;
  /** The account is suspended by an operator; pushed over the bus like a key's own status. */
  accountSuspended: boolean;
  /** The account's group's terms; a change of group or of its terms is pushed over the bus too. */
  group: GroupTerms;
}

interface CachedKey {
  key: KnownKey;
  /** The principal handed to every request of the key: built once per cache fill, not per request. */
  principal: ApiKeyPrincipal;
  expiresAt: number;
}

// Status and control changes (expiry, models, spend limit) are pushed over the invalidation bus; the TTL only
// bounds staleness if a message is lost.
const CACHE_TTL_MS = 60_000;
// Keys that are not in the database; a key is never issued after its hash was looked up, so this can be as long.
const UNKNOWN_TTL_MS = 60_000;
const UNKNOWN_MAX_ENTRIES = 10_000;
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Turns an Authorization header into the key's principal. Known keys are answered from memory,
 * so the hot path makes no database round trip; disable/delete reach every process through Redis.
 * Unknown keys live in a cache of their own, so a flood of made-up keys can never push a real one out,
 * and each client address may make only so many lookups of keys that turn out unknown (then 429).
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly known = new Map<string, CachedKey>();
  private readonly unknown = new Map<string, number>();
  /** One query per key hash at a time, however many requests carry it. */
  private readonly inFlight = new Map<string, Promise<KnownKey | null>>();
  private readonly lastTouched = new Map<string, number>();
  /** Bumped by every invalidation: a read that started before one may have seen the old status. */
  private generation = 0;
  private readonly maxKnownEntries: number;
  private readonly missBudget: LookupBudget;

  constructor(
    private readonly repository: ApiKeysRepository,
    bus: InvalidationBus,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.maxKnownEntries = config.apiKeyCacheSize;
    this.missBudget = new LookupBudget(config.apiKeyMissesPerIpPerMinute);
    bus.on(InvalidationTopic.ApiKey, (keyHash) => this.invalidate(keyHash));
  }

  /** Drops a key from this process's cache at once (other processes hear it over the bus). */
  forget(keyHash: string): void {
    this.invalidate(keyHash);
  }

  /** Drops every key from this process's cache at once (a change to an account group touches many). */
  forgetAll(): void {
    this.invalidate(null);
  }

  /**
   * `clientAddress` (as throttleAddress gives it) bounds the lookups of unknown keys it may cause;
   * without one (a second check of a request whose key was already looked up) nothing is counted.
   */
  async authenticate(authorization: string | undefined, clientAddress?: string): Promise<ApiKeyPrincipal> {
    const secret = parseBearerKey(authorization);
    if (!secret) {
      throw new ApiError(
        ErrorKind.InvalidApiKey,
        'Missing or malformed Authorization header. Send "Authorization: Bearer sk-...".',
      );
    }
    const keyHash = hashApiKey(secret);
    const now = Date.now();
    const cached = this.known.get(keyHash);
    const found =
      cached && cached.expiresAt > now ? cached : this.cachedEntry(await this.lookup(secret, keyHash, clientAddress));
    const key = found?.key;
    if (!key || key.status === 'deleted') {
      throw new ApiError(ErrorKind.InvalidApiKey, 'Incorrect API key provided.');
    }
    if (key.accountSuspended) {
      throw new ApiError(ErrorKind.AccountSuspended, 'This account is suspended. Contact support.');
    }
    if (key.status === 'disabled') {
      throw new ApiError(
        ErrorKind.ApiKeyDisabled,
        key.disabledBy === 'operator'
          ? 'This API key was disabled by an operator. Contact support.'
          : 'This API key is disabled. Enable it in the console.',
      );
    }
    if (key.expiresAt !== null && key.expiresAt.getTime() <= now) {
      throw new ApiError(
        ErrorKind.ApiKeyExpired,
        `This API key expired at ${key.expiresAt.toISOString()}. Extend it or create a new one in the console.`,
      );
    }
    this.touch(key.id);
    return found.principal;
  }

  /** The entry of a key just looked up (load() has already cached it, unless a change was announced meanwhile). */
  private cachedEntry(key: KnownKey | null): CachedKey | null {
    return key ? toEntry(key, Date.now()) : null;
  }

  private lookup(secret: string, keyHash: string, clientAddress?: string): Promise<KnownKey | null> | null {
    // A key of a shape we never issue cannot be in the database: no query for it.
    if (!isIssuableApiKey(secret) || (this.unknown.get(keyHash) ?? 0) > Date.now()) {
      return null;
    }
    let pending = this.inFlight.get(keyHash);
    if (!pending) {
      this.spendLookup(clientAddress);
      pending = this.load(keyHash).finally(() => {
        if (this.inFlight.get(keyHash) === pending) {
          this.inFlight.delete(keyHash);
        }
      });
      this.inFlight.set(keyHash, pending);
      if (clientAddress !== undefined) {
        // Only unknown keys use the budget up: a key that exists (or a failed query) gives it back.
        void pending.then(
          (found) => found && this.missBudget.refund(clientAddress),
          () => this.missBudget.refund(clientAddress),
        );
      }
    }
    return pending;
  }

  /**
   * Every made-up key of the right shape costs a query. Past the address's budget the request is
   * refused without one: 429 with retry-after rather than 401, because a valid key this process has
   * not cached yet is refused too, and a client told to retry later recovers while one told its key
   * is wrong does not. A cached valid key never gets here.
   */
  private spendLookup(clientAddress: string | undefined): void {
    const resetMs = clientAddress === undefined ? null : this.missBudget.take(clientAddress);
    if (resetMs !== null) {
      const retryAfter = Math.max(1, Math.ceil(resetMs / 1000));
      throw new ApiError(
        ErrorKind.RateLimited,
        `Too many requests with unknown API keys from your network. Retry after ${retryAfter}s.`,
        null,
        undefined,
        { 'retry-after': String(retryAfter) },
      );
    }
  }

  private async load(keyHash: string): Promise<KnownKey | null> {
    const generation = this.generation;
    const found = await this.repository.findByHash(keyHash);
    // Answers this request either way, but is kept only if no status change was announced meanwhile.
    if (generation === this.generation) {
      this.remember(keyHash, found);
    }
    return found;
  }

  private remember(keyHash: string, found: KnownKey | null): void {
    const now = Date.now();
    if (found) {
      this.known.delete(keyHash);
      evictOldestPast(this.known, this.maxKnownEntries);
      this.known.set(keyHash, toEntry(found, now));
    } else {
      this.unknown.delete(keyHash);
      evictOldestPast(this.unknown, UNKNOWN_MAX_ENTRIES);
      this.unknown.set(keyHash, now + UNKNOWN_TTL_MS);
    }
  }

  private invalidate(keyHash: string | null): void {
    this.generation++;
    if (keyHash === null) {
      this.known.clear();
      this.unknown.clear();
      this.inFlight.clear();
      return;
    }
    this.known.delete(keyHash);
    this.unknown.delete(keyHash);
    // Later requests start a fresh read instead of joining one that may have seen the old status.
    this.inFlight.delete(keyHash);
  }

  /** lastUsedAt is informational: written at most once a minute per key and process, off the request path. */
  private touch(keyId: string): void {
    const now = Date.now();
    if ((this.lastTouched.get(keyId) ?? 0) + TOUCH_INTERVAL_MS > now) {
      return;
    }
    this.lastTouched.set(keyId, now);
    this.repository
      .touch(keyId, new Date(now))
      .catch((error: Error) => this.logger.warn({ err: error.message, keyId }, 'could not record key use'));
  }
}

function toEntry(key: KnownKey, now: number): CachedKey {
  const principal: ApiKeyPrincipal = {
    kind: AuthKind.ApiKey,
    accountId: key.accountId,
    keyId: key.id,
    allowedModels: key.allowedModels ? new Set(key.allowedModels) : null,
    spendLimit: key.spendLimit,
    group: key.group,
  };
  return { key, principal, expiresAt: now + CACHE_TTL_MS };
}

/** Maps iterate in insertion order, so the first key is the oldest entry. */
function evictOldestPast<V>(map: Map<string, V>, maxEntries: number): void {
  while (map.size >= maxEntries && map.size > 0) {
    map.delete(map.keys().next().value as string);
  }
}
