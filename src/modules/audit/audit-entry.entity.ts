import { AdminRole } from 'src/config/admin-tokens';
import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export const AUDIT_OUTCOMES = ['pending', 'applied', 'failed'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/**
 * One change an operator asked of /admin. Written before the change runs (`pending`) and completed
 * after it (`applied` with the state after, or `failed`), so no change can happen without its row:
 * a process that dies in between leaves the row `pending`, never a change nobody logged.
 */
@Entity('admin_audit_log')
@Check('admin_audit_log_outcome_check', `"outcome" IN ('pending', 'applied', 'failed')`)
@Index('admin_audit_log_target_idx', ['targetType', 'targetId', 'id'])
@Index('admin_audit_log_actor_idx', ['actor', 'id'])
@Index('admin_audit_log_at_idx', ['at'])
export class AuditEntryEntity {
  /** Also the order of the log: pages go by it. */
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @CreateDateColumn({ type: 'timestamptz' })
  at: Date;

  /** The name of the admin token used (ADMIN_TOKENS; `default` for ADMIN_TOKEN). */
  @Column({ type: 'text' })
  actor: string;

  /** The role of that token when it made the change (ADMIN_TOKENS; `admin` for ADMIN_TOKEN). */
  @Column({ name: 'actor_role', type: 'text' })
  actorRole: AdminRole;

  @Column({ type: 'text' })
  method: string;

  /** The route's pattern, e.g. `/admin/channels/:channelId`. */
  @Column({ type: 'text' })
  route: string;

  /** What was changed: `channel`, `model`, `account`, `payment_settings`, … */
  @Column({ name: 'target_type', type: 'text' })
  targetType: string;

  /** The changed thing's id when it has one (the path's id). */
  @Column({ name: 'target_id', type: 'text', nullable: true })
  targetId: string | null;

  /** The target before the change, secrets removed; null when it did not exist or has no readable state. */
  @Column({ type: 'jsonb', nullable: true })
  before: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true })
  after: Record<string, unknown> | null;

  /** Names of secret fields whose value changed (their values are never stored). */
  @Column({ name: 'secrets_changed', type: 'text', array: true, default: () => "'{}'" })
  secretsChanged: string[];

  @Column({ type: 'text', default: 'pending' })
  outcome: AuditOutcome;

  /** The HTTP status answered, once known. */
  @Column({ type: 'integer', nullable: true })
  status: number | null;
}
