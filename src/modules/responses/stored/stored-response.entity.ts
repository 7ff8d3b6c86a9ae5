import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

/**
 * A Responses answer kept because its request said `store: true` (or left it out): what the model
 * produced and its usage, never the request's input. `sealed` is encrypted with SecretBox, as
 * channel keys are. The worker deletes rows past `expires_at` (StoredResponsesExpiry).
 */
@Entity('stored_responses')
export class StoredResponseEntity {
  /** The answer's `resp_…` id. */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'stored_responses_pkey' })
  id: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne('AccountEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'stored_responses_account_id_fkey' })
  account?: unknown;

  /** The sealed JSON of the answer's status, model, creation time and usage. */
  @Column({ type: 'text' })
  sealed: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Index('stored_responses_expires_at_idx')
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}

/** One output item of a kept answer (an assistant message, a function call), which `item_reference` names. */
@Entity('stored_response_items')
export class StoredResponseItemEntity {
  /** The item's `msg_…` / `fc_…` id. */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'stored_response_items_pkey' })
  id: string;

  @Index('stored_response_items_response_id_idx')
  @Column({ name: 'response_id', type: 'text' })
  responseId: string;

  @ManyToOne('StoredResponseEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'response_id', foreignKeyConstraintName: 'stored_response_items_response_id_fkey' })
  response?: unknown;

  /** The item's place in the answer's `output`. */
  @Column({ type: 'integer' })
  position: number;

  /** The sealed JSON of the item as the answer gave it. */
  @Column({ type: 'text' })
  sealed: string;
}
