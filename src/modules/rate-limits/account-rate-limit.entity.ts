import { AccountEntity } from 'src/modules/accounts/account.entity';
import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** WILDCARD_MODEL as model id: the override applies to every model without one of its own. */
export const WILDCARD_MODEL = '*';

/** An operator's per-account override of a model's limits; null means "the model's default" (or "none" for end users). */
@Entity('account_rate_limits')
export class AccountRateLimitEntity {
  @PrimaryColumn({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @PrimaryColumn({ name: 'model_id', type: 'text' })
  modelId: string;

  @Column({ type: 'integer', nullable: true })
  rpm: number | null;

  @Column({ type: 'integer', nullable: true })
  tpm: number | null;

  /** Per end user (the request's `user` field) within the account. */
  @Column({ name: 'end_user_rpm', type: 'integer', nullable: true })
  endUserRpm: number | null;

  @Column({ name: 'end_user_tpm', type: 'integer', nullable: true })
  endUserTpm: number | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'account_rate_limits_account_id_fkey' })
  account?: AccountEntity;
}
