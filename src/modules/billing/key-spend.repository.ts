import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

/**
 * A key's lifetime spend (api_keys.spent) is billing's counter, as the balance is: settlement adds
 * each charge in the transaction of its ledger entry, and admission reads it only when Redis has no
 * snapshot of it (a first limited request, or after Redis lost its data).
 */
@Injectable()
export class KeySpendRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** What a key has spent, as settled (0 for a key that does not exist). */
  async findSpent(keyId: string): Promise<bigint> {
    const rows = await this.dataSource.query<{ spent: string }[]>('SELECT spent FROM api_keys WHERE id = $1', [keyId]);
    return rows.length > 0 ? BigInt(rows[0].spent) : 0n;
  }

  /**
   * Adds each key's charges (0 for keys whose usage was settled before: their spent is read back
   * all the same) and returns every key's spent after. Its rows are locked after the accounts'
   * (keys belong to one account each), so concurrent batches cannot deadlock on them.
   */
  async addSpent(manager: EntityManager, charges: Map<string, bigint>): Promise<Map<string, bigint>> {
    if (charges.size === 0) {
      return new Map();
    }
    // In a WITH, so the driver answers the rows (a bare UPDATE answers [rows, count]).
    const rows = await manager.query<{ id: string; spent: string }[]>(
      `WITH updated AS (
         UPDATE api_keys SET spent = api_keys.spent + charge.amount
         FROM unnest($1::uuid[], $2::bigint[]) AS charge(id, amount)
         WHERE api_keys.id = charge.id
         RETURNING api_keys.id, api_keys.spent
       )
       SELECT id, spent::text AS spent FROM updated`,
      [[...charges.keys()], [...charges.values()].map(String)],
    );
    return new Map(rows.map((row) => [row.id, BigInt(row.spent)]));
  }
}
