import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

/**
 * A refresh token that a refresh replaced. It is kept (hashed) until its session goes, so that when it
 * comes back, which only a copy of it can do, its whole session is revoked as stolen.
 */
@Entity('console_retired_refresh_tokens')
export class RetiredRefreshTokenEntity {
  @PrimaryColumn({ name: 'refresh_hash', type: 'text' })
  refreshHash: string;

  @Index('console_retired_refresh_tokens_session_id_idx')
  @Column({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @ManyToOne('ConsoleSessionEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id', foreignKeyConstraintName: 'console_retired_refresh_tokens_session_id_fkey' })
  session?: unknown;

  @CreateDateColumn({ name: 'retired_at', type: 'timestamptz' })
  retiredAt: Date;
}
