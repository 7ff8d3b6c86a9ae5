import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { EntityManager, ILike, QueryFailedError, Repository } from 'typeorm';

const UNIQUE_VIOLATION = '23505';

export type NewAccount = Pick<AccountEntity, 'email' | 'passwordHash' | 'referralCode' | 'referredBy'>;

@Injectable()
export class AccountsRepository {
  constructor(@InjectRepository(AccountEntity) private readonly accounts: Repository<AccountEntity>) {}

  /** Inserts the account; null when the e-mail or referral code is taken (the caller tells which). */
  async create(values: NewAccount): Promise<AccountEntity | { conflict: 'email' | 'referral_code' }> {
    try {
      return await this.accounts.save(this.accounts.create({ ...values, balance: 0n }));
    } catch (error) {
      const driverError = (error as QueryFailedError).driverError as { code?: string; constraint?: string } | undefined;
      if (driverError?.code === UNIQUE_VIOLATION) {
        return { conflict: driverError.constraint === 'accounts_email_key' ? 'email' : 'referral_code' };
      }
      throw error;
    }
  }

  findById(id: string): Promise<AccountEntity | null> {
    return this.accounts.findOneBy({ id });
  }

  async findBalanceSnapshot(id: string): Promise<{ balance: bigint; version: bigint } | null> {
    const account = await this.accounts.findOne({ select: { balance: true, balanceVersion: true }, where: { id } });
    return account ? { balance: account.balance, version: account.balanceVersion } : null;
  }

  async updatePasswordHash(
    id: string,
    passwordHash: string,
    manager: EntityManager = this.accounts.manager,
  ): Promise<void> {
    await manager.update(AccountEntity, { id }, { passwordHash });
  }

  /** Marks the address verified (the first time only); inside the caller's transaction when given one. */
  async markEmailVerified(id: string, manager: EntityManager = this.accounts.manager): Promise<void> {
    await manager.query('UPDATE accounts SET email_verified_at = COALESCE(email_verified_at, now()) WHERE id = $1', [
      id,
    ]);
  }

  /** Whether the account verified its address; null when there is no such account. */
  async isEmailVerified(id: string): Promise<boolean | null> {
    const rows = await this.accounts.query<{ verified: boolean }[]>(
      'SELECT email_verified_at IS NOT NULL AS verified FROM accounts WHERE id = $1',
      [id],
    );
    return rows[0] ? rows[0].verified : null;
  }

  async isSuspended(id: string): Promise<boolean> {
    const account = await this.accounts.findOne({ select: { id: true, suspendedAt: true }, where: { id } });
    return (account?.suspendedAt ?? null) !== null;
  }

  /** Sets (a date) or clears (null) the suspension; null when the account does not exist. */
  async setSuspension(id: string, suspendedAt: Date | null, reason: string | null): Promise<AccountEntity | null> {
    const result = await this.accounts
      .createQueryBuilder()
      .update()
      .set({ suspendedAt, suspensionReason: reason })
      .where('id = :id', { id })
      .execute();
    return result.affected ? this.findById(id) : null;
  }

  findByEmail(email: string): Promise<AccountEntity | null> {
    return this.accounts.findOneBy({ email });
  }

  findByReferralCode(referralCode: string): Promise<AccountEntity | null> {
    return this.accounts.findOneBy({ referralCode });
  }

  searchByEmail(fragment: string | undefined, limit: number): Promise<AccountEntity[]> {
    const escaped = fragment?.replace(/[\\%_]/g, (c) => `\\${c}`);
    return this.accounts.find({
      where: escaped === undefined ? {} : { email: ILike(`%${escaped}%`) },
      order: { createdAt: 'DESC' },
      take: limit,
    });
  }
}
