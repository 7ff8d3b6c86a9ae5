import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { ConsoleSessionEntity } from 'src/modules/auth/console-session.entity';
import { EntityManager, Repository } from 'typeorm';

export type NewConsoleSession = Pick<
  ConsoleSessionEntity,
  'accountId' | 'refreshHash' | 'lastUsedAt' | 'expiresAt' | 'endsAt' | 'userAgent' | 'clientAddress'
>;

/**
 * A session whose refresh token was just traded: its id, its account, when the trade was made and
 * when the new refresh token dies (what the trade asked for, or the session's end if sooner).
 */
export interface RotatedSession {
  id: string;
  accountId: string;
  rotatedAt: Date;
  expiresAt: Date;
}

interface RotatedRow {
  id: string;
  account_id: string;
  rotated_at: Date;
  expires_at: Date;
}

const rotatedSession = (row: RotatedRow | undefined): RotatedSession | null =>
  row ? { id: row.id, accountId: row.account_id, rotatedAt: row.rotated_at, expiresAt: row.expires_at } : null;

/** Bounds the list a console shows; an account with more live sessions sees its most recently used. */
const LIST_LIMIT = 100;

@Injectable()
export class ConsoleSessionsRepository {
  constructor(@InjectRepository(ConsoleSessionEntity) private readonly sessions: Repository<ConsoleSessionEntity>) {}

  create(values: NewConsoleSession): Promise<ConsoleSessionEntity> {
    return this.sessions.save(this.sessions.create({ ...values, revokedAt: null }));
  }

  /**
   * Swaps a session's refresh token, live at `now`, for the next one and keeps the old one as retired
   * (since `now`), in one statement. The row lock makes it exactly-once: of concurrent refreshes with
   * one token, the others wait, then find the hash changed and match nothing. The new token dies at
   * `expiresAt` or at the session's end, whichever comes first.
   */
  async rotate(oldHash: string, newHash: string, expiresAt: Date, now: Date): Promise<RotatedSession | null> {
    const rows = await this.sessions.query<RotatedRow[]>(
      `WITH rotated AS (
         UPDATE console_sessions SET refresh_hash = $2, last_used_at = $4, expires_at = LEAST($3, ends_at)
         WHERE refresh_hash = $1 AND revoked_at IS NULL AND expires_at > $4
         RETURNING id, account_id, expires_at
       ), retired AS (
         INSERT INTO console_retired_refresh_tokens (refresh_hash, session_id, retired_at) SELECT $1, id, $4 FROM rotated
       )
       SELECT id, account_id, $4::timestamptz AS rotated_at, expires_at FROM rotated`,
      [oldHash, newHash, expiresAt, now],
    );
    return rotatedSession(rows[0]);
  }

  /**
   * The rotation a retired refresh token was traded in, when it is to be answered again: the token
   * was retired after `retiredAfter` (within the grace), the session is live at `now`, and its current
   * refresh token is still the one that trade gave (`successorHash`). Null otherwise: then the token
   * is back from a copy.
   */
  async findReplay(
    presentedHash: string,
    successorHash: string,
    retiredAfter: Date,
    now: Date,
  ): Promise<RotatedSession | null> {
    const rows = await this.sessions.query<RotatedRow[]>(
      `SELECT s.id, s.account_id, r.retired_at AS rotated_at, s.expires_at
       FROM console_retired_refresh_tokens r JOIN console_sessions s ON s.id = r.session_id
       WHERE r.refresh_hash = $1 AND r.retired_at > $3
         AND s.refresh_hash = $2 AND s.revoked_at IS NULL AND s.expires_at > $4`,
      [presentedHash, successorHash, retiredAfter, now],
    );
    return rotatedSession(rows[0]);
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

  /** The account of a session neither revoked nor expired at `now` (primary-key lookup, once per console request). */
  async findLiveAccount(sessionId: string, now: Date): Promise<string | null> {
    const session = await this.sessions
      .createQueryBuilder('s')
      .select('s.accountId')
      .where('s.id = :sessionId AND s.revokedAt IS NULL AND s.expiresAt > :now', { sessionId, now })
      .getOne();
    return session?.accountId ?? null;
  }

  listLive(accountId: string, now: Date): Promise<ConsoleSessionEntity[]> {
    return this.sessions
      .createQueryBuilder('s')
      .where('s.accountId = :accountId AND s.revokedAt IS NULL AND s.expiresAt > :now', { accountId, now })
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
   * Deletes up to `limit` sessions whose refresh token has expired by `now` (revoked ones included,
   * once expired; ended ones too, as expires_at never passes ends_at), oldest first, with their
   * retired tokens. Bounded so that no login waits on a backlog.
   */
  async deleteExpired(limit: number, now: Date): Promise<void> {
    await this.sessions.query(
      `DELETE FROM console_sessions WHERE id IN (
         SELECT id FROM console_sessions WHERE expires_at < $2 ORDER BY expires_at LIMIT $1
         FOR UPDATE SKIP LOCKED
       )`,
      [limit, now],
    );
  }
}
