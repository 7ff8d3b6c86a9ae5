import { AccountEntity } from 'src/modules/accounts/account.entity';
import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

/** What a mailed token lets its bearer do, once. */
export enum AccountTokenPurpose {
  VerifyEmail = 'verify_email',
  PasswordReset = 'password_reset',
}

/**
 * A single-use token sent by mail. Only its SHA-256 is kept: a leak of the table opens no account,
 * and the token itself exists only in the mail (and, while being sent, in the worker's memory).
 */
@Entity('account_tokens')
export class AccountTokenEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Index('account_tokens_account_id_idx')
  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'account_tokens_account_id_fkey' })
  account?: AccountEntity;

  @Column({ type: 'text' })
  purpose: AccountTokenPurpose;

  @Index('account_tokens_token_hash_key', { unique: true })
  @Column({ name: 'token_hash', type: 'text' })
  tokenHash: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
