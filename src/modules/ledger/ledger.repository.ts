import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DayRange } from 'src/common/http/date-range.dto';
import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { BalanceSnapshot } from 'src/modules/ledger/balance-gate.service';
import { LedgerEntryEntity, LedgerKind } from 'src/modules/ledger/ledger-entry.entity';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';

export interface LedgerPosting {
  accountId: string;
  kind: LedgerKind;
  /** Signed nano-dollars. */
  amount: bigint;
  reference: string;
  description?: string | null;
}

export type PostingResult =
  /** `version` is the account's balance version after the entry, for the Redis admission snapshot. */
  | { outcome: 'applied'; entry: LedgerEntryEntity; version: bigint }
  | { outcome: 'replayed'; entry: LedgerEntryEntity }
  | { outcome: 'insufficient_balance' }
  /** The balance would not fit in its column (a credit of absurd size). */
  | { outcome: 'out_of_range' }
  | { outcome: 'account_not_found' };

interface LedgerRow {
  id: string;
  account_id: string;
  kind: LedgerKind;
  amount: string;
  balance_after: string;
  reference: string;
  description: string | null;
  created_at: Date;
  seq: string;
}

/** What a batch did: the balances it moved, and the postings it left out. */
export interface PostedBatch {
  /** Balance and version after the batch of every account it moved, for the Redis admission snapshot. */
  balances: Map<string, BalanceSnapshot>;
  /** Postings left out, by their index in the batch, with why. */
  refused: Map<number, RefusedPosting>;
}

export type RefusedPosting = Extract<
  PostingResult,
  { outcome: 'replayed' | 'insufficient_balance' | 'account_not_found' }
>;

// ONE statement for the whole batch: every balance moves and its entries are written together or
// not at all, and no balance goes below zero at any entry whatever runs concurrently: the guard is
// the account's lowest running balance over its entries, checked by the UPDATE against the row as
// it is once any concurrent writer's lock is released. An account whose entries would break it is
// left out whole (its postings come back refused); the others apply.
// - An entry already written for its (kind, reference) is left out (a replay). That is kept by
//   ledger_references, not by ledger_entries: the ledger is partitioned by month, and a unique index
//   there could only hold per partition. The lookup is a lateral one so that it probes the guard's
//   primary key per posting: as a plain EXISTS the planner may hash the whole guard instead. Two
//   writers racing with the same posting both pass that check; the guard's primary key then fails
//   the later statement, entries and all.
// - balance_after is the balance after each entry, in the order given; the version moves by one per
//   entry, as the Redis snapshot compares versions. seq and created_at (clock time plus the entry's
//   position) follow that order.
// - Several accounts are locked in the order the UPDATE meets them: callers that run batches
//   concurrently lock the accounts first, in id order (lockBalances).
// - A low-balance alert that was sent is armed again once an entry leaves the balance at or above
//   its threshold, in the same statement: every credit (a top-up, an adjustment, a referral credit)
//   passes here, so none can lift the balance without re-arming it.
// One row per account of the batch comes back: its balance and version if it moved, and the
// positions of its postings left out (normally none).
const POST_MANY_SQL = `
  WITH given AS (
    SELECT t.*, w.written IS NOT NULL AS written
    FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::text[]) WITH ORDINALITY
      AS t(account_id, kind, amount, reference, description, ord)
    LEFT JOIN LATERAL (
      SELECT true AS written FROM ledger_references r WHERE r.kind = t.kind AND r.reference = t.reference LIMIT 1
    ) w ON true
  ),
  input AS (
    SELECT g.*, SUM(g.amount) OVER (PARTITION BY g.account_id ORDER BY g.ord) AS running
    FROM given g WHERE NOT g.written
  ),
  totals AS (
    SELECT account_id, SUM(amount) AS delta, MIN(running) AS lowest, COUNT(*) AS entries
    FROM input GROUP BY account_id
  ),
  updated AS (
    UPDATE accounts a SET balance = a.balance + t.delta, balance_version = a.balance_version + t.entries
    FROM totals t
    WHERE a.id = t.account_id AND a.balance + t.lowest >= 0
    RETURNING a.id, a.balance, a.balance_version, t.delta
  ),
  guarded AS (
    INSERT INTO ledger_references (kind, reference)
    SELECT i.kind, i.reference FROM input i JOIN updated u ON u.id = i.account_id
  ),
  rearmed AS (
    UPDATE balance_alerts b SET alert_sent = false, updated_at = now()
    FROM updated u
    WHERE b.account_id = u.id AND b.alert_sent AND u.balance >= b.threshold
  ),
  inserted AS (
    INSERT INTO ledger_entries (account_id, kind, amount, balance_after, reference, description, created_at)
    SELECT i.account_id, i.kind, i.amount, u.balance - u.delta + i.running, i.reference, i.description,
           clock_timestamp() + i.ord * interval '1 microsecond'
    FROM input i JOIN updated u ON u.id = i.account_id
    ORDER BY i.ord
  )
  SELECT g.account_id, u.balance, u.balance_version,
         array_agg(g.ord) FILTER (WHERE g.written OR u.id IS NULL) AS refused
  FROM given g LEFT JOIN updated u ON u.id = g.account_id
  GROUP BY g.account_id, u.balance, u.balance_version`;

const UNIQUE_VIOLATION = '23505';
const NUMERIC_OUT_OF_RANGE = '22003';

@Injectable()
export class LedgerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Applies a posting exactly once per (kind, reference); a repeat returns the first entry unchanged. */
  async post(posting: LedgerPosting, manager: EntityManager = this.dataSource.manager): Promise<PostingResult> {
    const { kind, reference } = posting;
    try {
      const { balances, refused } = await this.postMany(manager, [posting]);
      if (refused.size > 0) {
        return refused.get(0)!;
      }
      const entry = await manager.findOneByOrFail(LedgerEntryEntity, { kind, reference });
      return { outcome: 'applied', entry, version: balances.get(posting.accountId)!.version };
    } catch (error) {
      const code = error instanceof QueryFailedError ? (error.driverError as { code?: string }).code : undefined;
      if (code === UNIQUE_VIOLATION) {
        // Another writer applied the same posting meanwhile.
        return { outcome: 'replayed', entry: await manager.findOneByOrFail(LedgerEntryEntity, { kind, reference }) };
      }
      if (code === NUMERIC_OUT_OF_RANGE) {
        return { outcome: 'out_of_range' };
      }
      throw error;
    }
  }

  /**
   * Applies postings in the order given, in one statement (POST_MANY_SQL). A batch must not repeat
   * a (kind, reference): ledger_references' primary key refuses it. Throws when a balance would not fit in its column.
   */
  async postMany(manager: EntityManager, postings: LedgerPosting[]): Promise<PostedBatch> {
    const balances = new Map<string, BalanceSnapshot>();
    const refused = new Map<number, RefusedPosting>();
    if (postings.length === 0) {
      return { balances, refused };
    }
    const rows = await manager.query<
      { account_id: string; balance: string | null; balance_version: string | null; refused: string[] | null }[]
    >(POST_MANY_SQL, [
      postings.map((posting) => posting.accountId),
      postings.map((posting) => posting.kind),
      postings.map((posting) => posting.amount.toString()),
      postings.map((posting) => posting.reference),
      postings.map((posting) => posting.description ?? null),
    ]);
    const left: number[] = [];
    for (const row of rows) {
      if (row.balance !== null && row.balance_version !== null) {
        balances.set(row.account_id, { balance: BigInt(row.balance), version: BigInt(row.balance_version) });
      }
      left.push(...(row.refused ?? []).map((ord) => Number(ord) - 1));
    }
    if (left.length > 0) {
      const why = await this.whyRefused(
        manager,
        left.map((index) => postings[index]),
      );
      left.forEach((index) => refused.set(index, why(postings[index])));
    }
    return { balances, refused };
  }

  /** Locks the accounts' rows in id order (so concurrent lockers cannot deadlock) and reads their balances. */
  async lockBalances(manager: EntityManager, accountIds: string[]): Promise<Map<string, BalanceSnapshot>> {
    const rows = await manager.query<{ id: string; balance: string; balance_version: string }[]>(
      'SELECT id, balance, balance_version FROM accounts WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE',
      [accountIds],
    );
    return new Map(rows.map((row) => [row.id, { balance: BigInt(row.balance), version: BigInt(row.balance_version) }]));
  }

  /**
   * Balances of the accounts adjusted or topped up in the last `windowSeconds` (the newest `limit`
   * such entries), read now: the balance changes the API pushes to Redis itself, not settlement.
   */
  async recentlyAdjustedBalances(windowSeconds: number, limit: number): Promise<Map<string, BalanceSnapshot>> {
    // The kinds are spelled as in ledger_entries_pushed_changes_idx, so the planner uses that index.
    const rows = await this.dataSource.query<{ id: string; balance: string; balance_version: string }[]>(
      `SELECT a.id, a.balance, a.balance_version FROM accounts a
       WHERE a.id IN (
         SELECT e.account_id FROM ledger_entries e
         WHERE e.kind IN ('adjustment', 'topup') AND e.created_at > now() - make_interval(secs => $1)
         ORDER BY e.created_at DESC LIMIT $2
       )`,
      [windowSeconds, limit],
    );
    return new Map(rows.map((row) => [row.id, { balance: BigInt(row.balance), version: BigInt(row.balance_version) }]));
  }

  /** An account's entries newest first in the order they were applied (seq), which timestamps alone cannot give. */
  async entries(accountId: string, range: DayRange, beforeSeq: string | null, limit: number) {
    const rows = await this.dataSource.query<LedgerRow[]>(
      `SELECT * FROM ledger_entries
       WHERE account_id = $1
         AND ($2::date IS NULL OR created_at >= ($2::date::timestamp AT TIME ZONE 'UTC'))
         AND ($3::date IS NULL OR created_at < (($3::date + 1)::timestamp AT TIME ZONE 'UTC'))
         AND ($4::bigint IS NULL OR seq < $4::bigint)
       ORDER BY seq DESC LIMIT $5`,
      [accountId, range.from, range.to, beforeSeq, limit],
    );
    return rows.map(toEntity);
  }

  /** The sum of an account's entries of one kind (all the referral credit it received, say). */
  async total(accountId: string, kind: LedgerKind): Promise<bigint> {
    const [row] = await this.dataSource.query<{ total: string }[]>(
      'SELECT COALESCE(SUM(amount), 0) AS total FROM ledger_entries WHERE account_id = $1 AND kind = $2',
      [accountId, kind],
    );
    return BigInt(row.total);
  }

  /** Why postings were left out: written before (a replay), no such account, or a balance too low. */
  private async whyRefused(
    manager: EntityManager,
    refused: LedgerPosting[],
  ): Promise<(posting: LedgerPosting) => RefusedPosting> {
    const [written, accounts] = await Promise.all([
      manager.query<LedgerRow[]>(
        `SELECT e.* FROM ledger_entries e
         JOIN unnest($1::text[], $2::text[]) AS t(kind, reference) ON e.kind = t.kind AND e.reference = t.reference`,
        [refused.map((posting) => posting.kind), refused.map((posting) => posting.reference)],
      ),
      manager.query<{ id: string }[]>('SELECT id FROM accounts WHERE id = ANY($1::uuid[])', [
        refused.map((posting) => posting.accountId),
      ]),
    ]);
    const entries = new Map(written.map((row) => [`${row.kind}:${row.reference}`, toEntity(row)]));
    const known = new Set(accounts.map((row) => row.id));
    return (posting) => {
      const entry = entries.get(`${posting.kind}:${posting.reference}`);
      if (entry) {
        return { outcome: 'replayed', entry };
      }
      return { outcome: known.has(posting.accountId) ? 'insufficient_balance' : 'account_not_found' };
    };
  }
}

function toEntity(row: LedgerRow): LedgerEntryEntity {
  return Object.assign(new LedgerEntryEntity(), {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    amount: bigintTransformer.from(row.amount) as bigint,
    balanceAfter: bigintTransformer.from(row.balance_after) as bigint,
    reference: row.reference,
    description: row.description,
    createdAt: row.created_at,
    seq: row.seq,
  });
}
