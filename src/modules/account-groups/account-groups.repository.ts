import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AccountGroupEntity } from 'src/modules/account-groups/account-group.entity';
import { Repository } from 'typeorm';

/** A group's settings as the operator writes them. */
export type AccountGroupValues = Pick<AccountGroupEntity, 'id' | 'description' | 'priceMultiplier' | 'rpm' | 'tpm'>;

interface GroupTermsRow {
  price_multiplier: string;
  rpm: number | null;
  tpm: number | null;
}

export interface AccountGroupWithMembers {
  group: AccountGroupEntity;
  accounts: number;
}

@Injectable()
export class AccountGroupsRepository {
  constructor(@InjectRepository(AccountGroupEntity) private readonly groups: Repository<AccountGroupEntity>) {}

  /** Every group with how many accounts it has (groups are few: an operator's tiers). */
  async listWithMembers(): Promise<AccountGroupWithMembers[]> {
    const counts = await this.groups.query<{ group_id: string; accounts: string }[]>(
      'SELECT group_id, count(*) AS accounts FROM accounts GROUP BY group_id',
    );
    const byGroup = new Map(counts.map((row) => [row.group_id, Number(row.accounts)]));
    const groups = await this.groups.find({ order: { id: 'ASC' } });
    return groups.map((group) => ({ group, accounts: byGroup.get(group.id) ?? 0 }));
  }

  async findWithMembers(id: string): Promise<AccountGroupWithMembers | null> {
    const group = await this.groups.findOneBy({ id });
    return group ? { group, accounts: await this.memberCount(id) } : null;
  }

  /**
   * Creates the group or replaces its settings; whether it was new, and whether its terms (multiplier, rpm,
   * tpm: what a key's cache holds) differ from what it had. The old row is read locked first, so a change
   * committed meanwhile is compared against, not missed.
   */
  async upsert(
    values: AccountGroupValues,
  ): Promise<{ group: AccountGroupEntity; created: boolean; termsChanged: boolean }> {
    const { created, termsChanged } = await this.groups.manager.transaction(async (manager) => {
      const [old] = await manager.query<GroupTermsRow[]>(
        'SELECT price_multiplier, rpm, tpm FROM account_groups WHERE id = $1 FOR UPDATE',
        [values.id],
      );
      const [row] = await manager.query<(GroupTermsRow & { created: boolean })[]>(
        `INSERT INTO account_groups (id, description, price_multiplier, rpm, tpm)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO UPDATE SET description = EXCLUDED.description, price_multiplier = EXCLUDED.price_multiplier,
           rpm = EXCLUDED.rpm, tpm = EXCLUDED.tpm, updated_at = now()
         RETURNING (xmax = 0) AS created, price_multiplier, rpm, tpm`,
        [values.id, values.description, values.priceMultiplier, values.rpm, values.tpm],
      );
      // Both as the column holds them ("0.700000" however it was written).
      const same =
        old !== undefined &&
        old.price_multiplier === row.price_multiplier &&
        old.rpm === row.rpm &&
        old.tpm === row.tpm;
      return { created: row.created, termsChanged: !same };
    });
    return { group: (await this.groups.findOneBy({ id: values.id }))!, created, termsChanged };
  }

  /**
   * Deletes a group no account belongs to, in one statement: an account moved into it meanwhile
   * makes the foreign key refuse. 'deleted', 'missing' or 'in_use'.
   */
  async deleteUnused(id: string): Promise<'deleted' | 'missing' | 'in_use'> {
    // For DELETE and UPDATE, TypeORM's query() answers [rows, affected count].
    const [, deleted] = await this.groups.query<[unknown[], number]>(
      'DELETE FROM account_groups g WHERE g.id = $1 AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.group_id = g.id)',
      [id],
    );
    if (deleted > 0) {
      return 'deleted';
    }
    return (await this.groups.existsBy({ id })) ? 'in_use' : 'missing';
  }

  /** The group of an account (null when the account does not exist). */
  async findOfAccount(accountId: string): Promise<AccountGroupEntity | null> {
    return this.groups
      .createQueryBuilder('g')
      .innerJoin('accounts', 'a', 'a.group_id = g.id')
      .where('a.id = :accountId', { accountId })
      .getOne();
  }

  /** Moves an account into an existing group; false when the account or the group does not exist. */
  async assign(accountId: string, groupId: string): Promise<boolean> {
    const [, updated] = await this.groups.query<[unknown[], number]>(
      'UPDATE accounts SET group_id = g.id FROM account_groups g WHERE accounts.id = $1 AND g.id = $2',
      [accountId, groupId],
    );
    return updated > 0;
  }

  private async memberCount(id: string): Promise<number> {
    const [row] = await this.groups.query<{ accounts: string }[]>(
      'SELECT count(*) AS accounts FROM accounts WHERE group_id = $1',
      [id],
    );
    return Number(row.accounts);
  }
}
