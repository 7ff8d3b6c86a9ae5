import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { AccountGroupEntity } from 'src/modules/account-groups/account-group.entity';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

@Entity('accounts')
@Check('accounts_balance_not_negative', '"balance" >= 0')
export class AccountEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Stored lower-cased, so uniqueness is case-insensitive. */
  @Index('accounts_email_key', { unique: true })
  @Column({ type: 'text' })
  email: string;

  @Column({ name: 'password_hash', type: 'text' })
  passwordHash: string;

  /** Nano-dollars. Changes only together with a ledger entry (LedgerRepository). */
  @Column({ type: 'bigint', default: 0, transformer: bigintTransformer })
  balance: bigint;

  /** Bumped with every balance change, so the Redis admission snapshot never goes back in time. */
  @Column({ name: 'balance_version', type: 'bigint', default: 0, transformer: bigintTransformer })
  balanceVersion: bigint;

  @Index('accounts_referral_code_key', { unique: true })
  @Column({ name: 'referral_code', type: 'text' })
  referralCode: string;

  @Column({ name: 'referred_by', type: 'uuid', nullable: true })
  referredBy: string | null;

  @ManyToOne(() => AccountEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'referred_by', foreignKeyConstraintName: 'accounts_referred_by_fkey' })
  referrer?: AccountEntity | null;

  /** Set by an operator: the account's keys are refused (403 account_suspended), its console is read-only. */
  @Column({ name: 'suspended_at', type: 'timestamptz', nullable: true })
  suspendedAt: Date | null;

  /** The operator's note on why (shown to operators only). */
  @Column({ name: 'suspension_reason', type: 'text', nullable: true })
  suspensionReason: string | null;

  /** When the owner followed the link mailed to the address; null: not yet (EmailVerificationService). */
  @Column({ name: 'email_verified_at', type: 'timestamptz', nullable: true })
  emailVerifiedAt: Date | null;

  /** When the account's first top-up was paid (PaymentConfirmation); a referral takes effect then at the latest. */
  @Column({ name: 'first_paid_topup_at', type: 'timestamptz', nullable: true })
  firstPaidTopupAt: Date | null;

  /** The account's group (its price multiplier and default limits); `default` (1×) until an operator moves it. */
  @Index('accounts_group_id_idx')
  @Column({ name: 'group_id', type: 'text', default: 'default' })
  groupId: string;

  @ManyToOne(() => AccountGroupEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'group_id', foreignKeyConstraintName: 'accounts_group_id_fkey' })
  group?: AccountGroupEntity;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
