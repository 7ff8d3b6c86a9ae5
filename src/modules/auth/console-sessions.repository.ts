import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { ConsoleSessionEntity } from 'src/modules/auth/console-session.entity';
import { EntityManager, Repository } from 'typeorm';

export type NewConsoleSession = Pick<
  ConsoleSessionEntity,
  'accountId' | 'refreshHash' | 'expiresAt' | 'userAgent' | 'clientAddress'
>;

/** What a rotation found: the session whose refresh token it replaced. */
export interface RotatedSession {
  id: string;
  accountId: string;
}

/** Bounds the list a console shows; an account with more live sessions sees its most recently used. */
const LIST_LIMIT = 100;

@Injectable()
export class ConsoleSessionsRepository {
  constructor(@InjectRepository(ConsoleSessionEntity) private readonly sessions: Repository<ConsoleSessionEntity>) {}

  create(values: NewConsoleSession): Promise<ConsoleSessionEntity> {
    return this.sessions.save(this.sessions.create({ ...values, lastUsedAt: new Date(), revokedAt: null }));
  }

  /**
   * Swaps a live session's refresh token for the next one and keeps the old one as retired, in one
   * statement. The row lock makes it exactly-once: of concurrent refreshes with one token, the others
   * wait, then find the hash changed and match nothing.
   */
  async rotate(oldHash: string, newHash: string, expiresAt: Date): Promise<RotatedSession | null> {
    const rows = await this.sessions.query<{ id: string; account_id: string }[]>(
      `WITH rotated AS (
         UPDATE console_sessions SET refresh_hash = $2, last_used_at = now(), expires_at = $3
         WHERE refresh_hash = $1 AND revoked_at IS NULL AND expires_at > now()
         RETURNING id, account_id
       ), retired AS (
         INSERT INTO console_retired_refresh_tokens (refresh_hash, session_id) SELECT $1, id FROM rotated
       )
       SELECT id, account_id FROM rotated`,
      [oldHash, newHash, expiresAt],
    );
    return rows[0] ? { id: rows[0].id, accountId: rows[0].account_id } : null;
  }

  /** Revokes the session a retired refresh token belonged to; its id when one was live. */
  async revokeByRetiredHash(hash: string): Promise<string | null> {
    const rows = await this.sessions.query<{ id: string }[]>(
      `WITH revoked AS (
         UPDATE console_sessions s SET revoked_at = now()
         FROM console_retired_refresh_tokens r
         WHERE r.refresh_hash = $1 AND s.id = r.session_id AND s.revoked_at IS NULL
         RETURNING s.id
       ) SELECT id FROM revoked`,
      [hash],
    );
    return rows[0]?.id ?? null;
  }

  /** The account of a session that is neither revoked nor expired (primary-key lookup, once per console request). */
  async findLiveAccount(sessionId: string): Promise<string | null> {
    const session = await this.sessions
      .createQueryBuilder('s')
      .select('s.accountId')
      .where('s.id = :sessionId AND s.revokedAt IS NULL AND s.expiresAt > now()', { sessionId })
      .getOne();
    return session?.accountId ?? null;
  }

  listLive(accountId: string): Promise<ConsoleSessionEntity[]> {
    return this.sessions
      .createQueryBuilder('s')
      .where('s.accountId = :accountId AND s.revokedAt IS NULL AND s.expiresAt > now()', { accountId })
      .orderBy('s.lastUsedAt', 'DESC')
      .limit(LIST_LIMIT)
      .getMany();
  }

  /** Revokes the account's live sessions (all, or all but `exceptId`); how many it revoked. */
  async revokeAll(
    accountId: string,
    exceptId: string | null,
    manager: EntityManager = this.sessions.manager,
  ): Promise<number> {
    const query = manager
      .createQueryBuilder()
      .update(ConsoleSessionEntity)
      .set({ revokedAt: () => 'now()' })
      .where('account_id = :accountId AND revoked_at IS NULL', { accountId });
    if (exceptId) {
      query.andWhere('id <> :exceptId', { exceptId });
    }
    const result = await query.execute();
    return result.affected ?? 0;
  }

  /** Revokes one session of the account; false when it was not live (or not the account's). */
  async revoke(accountId: string, sessionId: string): Promise<boolean> {
    const result = await this.sessions
      .createQueryBuilder()
      .update()
      .set({ revokedAt: () => 'now()' })
      .where('id = :sessionId AND account_id = :accountId AND revoked_at IS NULL', { sessionId, accountId })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /**
   * Deletes up to `limit` sessions whose refresh token has expired (revoked ones included, once
   * expired), oldest first, with their retired tokens. Bounded so that no login waits on a backlog.
   */
  async deleteExpired(limit: number): Promise<void> {
    await this.sessions.query(
      `DELETE FROM console_sessions WHERE id IN (
         SELECT id FROM console_sessions WHERE expires_at < now() ORDER BY expires_at LIMIT $1
         FOR UPDATE SKIP LOCKED
       )`,
      [limit],
    );
  }
}
