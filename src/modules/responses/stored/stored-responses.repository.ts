import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** A kept answer as written: its sealed summary and its sealed output items, in output order. */
export interface SealedResponse {
  id: string;
  accountId: string;
  sealed: string;
  expiresAt: Date;
  items: { id: string; sealed: string }[];
}

/** Both tables in one statement: one round trip, and an answer is never seen without its items. */
const SAVE_SQL = `
  WITH kept AS (
    INSERT INTO stored_responses (id, account_id, sealed, expires_at) VALUES ($1, $2, $3, $4) RETURNING id
  )
  INSERT INTO stored_response_items (id, response_id, position, sealed)
  SELECT item.id, kept.id, item.position - 1, item.sealed
  FROM kept, unnest($5::text[], $6::text[]) WITH ORDINALITY AS item(id, sealed, position)`;

/** Only an account's own answers that have not expired are ever read: the worker deletes the rest later. */
const LIVE = `r.account_id = $1 AND r.expires_at > now()`;

/**
 * stored_responses and stored_response_items in SQL: every read is by primary key (or the items of
 * one answer), bound to the account; expiry is a batched delete by the worker, off the request path.
 */
@Injectable()
export class StoredResponsesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async save(response: SealedResponse): Promise<void> {
    const { id, accountId, sealed, expiresAt, items } = response;
    await this.dataSource.query(SAVE_SQL, [
      id,
      accountId,
      sealed,
      expiresAt,
      items.map((item) => item.id),
      items.map((item) => item.sealed),
    ]);
  }

  /** The sealed items among `ids` that belong to the account's live answers, by id. */
  async liveItems(accountId: string, ids: string[]): Promise<Map<string, string>> {
    const rows = await this.dataSource.query<{ id: string; sealed: string }[]>(
      `SELECT i.id, i.sealed FROM stored_response_items i JOIN stored_responses r ON r.id = i.response_id
       WHERE ${LIVE} AND i.id = ANY($2::text[])`,
      [accountId, ids],
    );
    return new Map(rows.map((row) => [row.id, row.sealed]));
  }

  /** The account's live answer `id` with its items in output order, or null. */
  async find(accountId: string, id: string): Promise<{ sealed: string; items: string[] } | null> {
    const rows = await this.dataSource.query<{ sealed: string; items: string[] }[]>(
      `SELECT r.sealed,
              COALESCE(ARRAY(SELECT i.sealed FROM stored_response_items i WHERE i.response_id = r.id ORDER BY i.position),
                       '{}') AS items
       FROM stored_responses r WHERE ${LIVE} AND r.id = $2`,
      [accountId, id],
    );
    return rows[0] ?? null;
  }

  /** Deletes the account's live answer `id` and its items; false when there was none. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `DELETE FROM stored_responses r WHERE ${LIVE} AND r.id = $2 RETURNING r.id`,
      [accountId, id],
    );
    return rows.length > 0;
  }

  /** Deletes up to `batch` answers expired by `now` (their items go with them); returns how many. */
  async deleteExpired(now: Date, batch: number): Promise<number> {
    const rows = await this.dataSource.query<unknown[]>(
      `DELETE FROM stored_responses WHERE id IN (
         SELECT id FROM stored_responses WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2
       ) RETURNING id`,
      [now, batch],
    );
    return rows.length;
  }
}
