import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

export const API_KEY_STATUSES = ['enabled', 'disabled', 'deleted'] as const;
export type ApiKeyStatus = (typeof API_KEY_STATUSES)[number];

@Entity('api_keys')
@Check('api_keys_status_check', `"status" IN ('enabled', 'disabled', 'deleted')`)
@Index('api_keys_account_idx', ['accountId'])
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
