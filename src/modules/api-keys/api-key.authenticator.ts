import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { ApiKeyPrincipal, AuthKind } from 'src/common/decorators/auth.decorators';
import { LOGGER } from 'src/common/logging/logger';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { ApiKeyStatus } from 'src/modules/api-keys/api-key.entity';
import { hashApiKey, parseBearerKey } from 'src/modules/api-keys/api-key.secret';
import { ApiKeysRepository } from 'src/modules/api-keys/api-keys.repository';

interface CachedKey {
  found: { id: string; accountId: string; status: ApiKeyStatus } | null;
  expiresAt: number;
}

// Status changes are pushed over the invalidation bus; the TTL only bounds staleness if a message is lost.
const CACHE_TTL_MS = 60_000;
const CACHE_MAX_ENTRIES = 50_000;
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Turns an Authorization header into the key's principal. Known keys are answered from memory,
 * so the hot path makes no database round trip; disable/delete reach every process through Redis.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CachedKey>();
  private readonly lastTouched = new Map<string, number>();

  constructor(
    private readonly repository: ApiKeysRepository,
    bus: InvalidationBus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    bus.on(InvalidationTopic.ApiKey, (keyHash) => (keyHash ? this.cache.delete(keyHash) : this.cache.clear()));
  }

  /** Drops a key from this process's cache at once (other processes hear it over the bus). */
  forget(keyHash: string): void {
    this.cache.delete(keyHash);
  }

  async authenticate(authorization: string | undefined): Promise<ApiKeyPrincipal> {
    const secret = parseBearerKey(authorization);
    if (!secret) {
      throw new ApiError(
        ErrorKind.InvalidApiKey,
        'Missing or malformed Authorization header. Send "Authorization: Bearer sk-...".',
      );
    }
    const key = await this.lookup(hashApiKey(secret));
    if (!key || key.status === 'deleted') {
      throw new ApiError(ErrorKind.InvalidApiKey, 'Incorrect API key provided.');
    }
    if (key.status === 'disabled') {
      throw new ApiError(ErrorKind.ApiKeyDisabled, 'This API key is disabled. Enable it in the console.');
    }
    this.touch(key.id);
    return { kind: AuthKind.ApiKey, accountId: key.accountId, keyId: key.id };
  }

  private async lookup(keyHash: string): Promise<CachedKey['found']> {
    const now = Date.now();
    const cached = this.cache.get(keyHash);
    if (cached && cached.expiresAt > now) {
      return cached.found;
    }
    const found = await this.repository.findByHash(keyHash);
    if (this.cache.size >= CACHE_MAX_ENTRIES) {
      this.cache.delete(this.cache.keys().next().value as string);
    }
    this.cache.set(keyHash, { found, expiresAt: now + CACHE_TTL_MS });
    return found;
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
