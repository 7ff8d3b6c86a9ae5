import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { AccountTokenPurpose } from 'src/modules/mail/account-token.entity';
import { DataSource, EntityManager } from 'typeorm';

/** 32 random bytes: guessing one is hopeless, so a fast hash is enough to keep the table useless if leaked. */
const TOKEN_BYTES = 32;

export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Mailed single-use tokens: minted by the worker as it sends, consumed by the API when followed. */
@Injectable()
export class AccountTokensRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A new token for the account; only its digest is stored. Returns the token and the row's id. */
  async mint(accountId: string, purpose: AccountTokenPurpose, ttlMs: number): Promise<{ id: string; token: string }> {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    const rows = await this.dataSource.query<{ id: string }[]>(
      `INSERT INTO account_tokens (account_id, purpose, token_hash, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING id`,
      [accountId, purpose, tokenDigest(token), ttlMs / 1000],
    );
    return { id: rows[0].id, token };
  }

  /** Removes a token whose mail was not sent: nobody holds it. */
  async discard(id: string): Promise<void> {
    await this.dataSource.query('DELETE FROM account_tokens WHERE id = $1', [id]);
  }

  /** The account a live token (unused, unexpired, of this purpose) belongs to, without using it up. */
  async peek(token: string, purpose: AccountTokenPurpose): Promise<string | null> {
    const rows = await this.dataSource.query<{ account_id: string }[]>(
      `SELECT account_id FROM account_tokens
       WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()`,
      [tokenDigest(token), purpose],
    );
    return rows[0]?.account_id ?? null;
  }

  /**
   * Uses the token up and returns its account, or null when it is unknown, used, expired or of
   * another purpose. One conditional UPDATE: of two concurrent uses, exactly one gets the account.
   */
  async consume(manager: EntityManager, token: string, purpose: AccountTokenPurpose): Promise<string | null> {
    const [rows] = await manager.query<[{ account_id: string }[], number]>(
      `UPDATE account_tokens SET used_at = now()
       WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
       RETURNING account_id`,
      [tokenDigest(token), purpose],
    );
    return rows[0]?.account_id ?? null;
  }

  /** Uses up every other live token of the purpose: after a reset, older reset mails open nothing. */
  async consumeAll(manager: EntityManager, accountId: string, purpose: AccountTokenPurpose): Promise<void> {
    await manager.query(
      'UPDATE account_tokens SET used_at = now() WHERE account_id = $1 AND purpose = $2 AND used_at IS NULL',
      [accountId, purpose],
    );
  }

  /** Whether the account's address is verified; null without the account. */
  async isEmailVerified(accountId: string): Promise<boolean | null> {
    const rows = await this.dataSource.query<{ verified: boolean }[]>(
      'SELECT email_verified_at IS NOT NULL AS verified FROM accounts WHERE id = $1',
      [accountId],
    );
    return rows[0]?.verified ?? null;
  }

  inTransaction<T>(run: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(run);
  }
}
