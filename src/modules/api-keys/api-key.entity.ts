import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

export const API_KEY_STATUSES = ['enabled', 'disabled', 'deleted'] as const;
export type ApiKeyStatus = (typeof API_KEY_STATUSES)[number];
export const KEY_DISABLERS = ['owner', 'operator'] as const;
/** Who disabled a disabled key: its owner (who may enable it again) or an operator (who alone may). */
export type KeyDisabler = (typeof KEY_DISABLERS)[number];

@Entity('api_keys')
@Check('api_keys_status_check', `"status" IN ('enabled', 'disabled', 'deleted')`)
@Check(
  'api_keys_disabled_by_check',
  `("status" = 'disabled') = ("disabled_by" IS NOT NULL) AND ("disabled_by" IS NULL OR "disabled_by" IN ('owner', 'operator'))`,
)
@Index('api_keys_account_idx', ['accountId'])
@Index('api_keys_created_idx', ['createdAt', 'id'])
// key_prefix with text_pattern_ops (for LIKE 'prefix%'), which TypeORM cannot declare: the migration makes it.
@Index('api_keys_prefix_idx', { synchronize: false })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'api_keys_account_id_fkey' })
  account?: AccountEntity;

  @Column({ type: 'text' })
  name: string;

  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  @Index('api_keys_key_hash_key', { unique: true })
  @Column({ name: 'key_hash', type: 'text' })
  keyHash: string;

  /** The first characters of the secret, for display only. */
  @Column({ name: 'key_prefix', type: 'text' })
  keyPrefix: string;

  @Column({ type: 'text', default: 'enabled' })
  status: ApiKeyStatus;

  /** Set exactly when the key is disabled: who disabled it. */
  @Column({ name: 'disabled_by', type: 'text', nullable: true })
  disabledBy: KeyDisabler | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  /** After this the key is refused (403 api_key_expired); null: never expires. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  /** The only model ids the key may use; null: every model. */
  @Column({ name: 'allowed_models', type: 'text', array: true, nullable: true })
  allowedModels: string[] | null;

  /** Nano-dollars the key may spend over its life; null: no limit beyond the balance. */
  @Column({ name: 'spend_limit', type: 'bigint', nullable: true, transformer: bigintTransformer })
  spendLimit: bigint | null;

  /** Nano-dollars charged to the account through this key, added by settlement with the ledger entry. */
  @Column({ type: 'bigint', default: 0, transformer: bigintTransformer })
  spent: bigint;
}
