import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One console login: its access tokens name it (`sid`), and it holds the hash of its one current
 * refresh token. Revoking it ends every access token of it at once (the auth guard checks it).
 */
@Entity('console_sessions')
export class ConsoleSessionEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Index('console_sessions_account_id_idx')
  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne('AccountEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'console_sessions_account_id_fkey' })
  account?: unknown;

  /** SHA-256 (hex) of the current refresh token; the token itself is only ever in the client's hands. */
  @Index('console_sessions_refresh_hash_key', { unique: true })
  @Column({ name: 'refresh_hash', type: 'text' })
  refreshHash: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz' })
  lastUsedAt: Date;

  /** When the session ends whatever its refreshes (CONSOLE_SESSION_MAX_DAYS after the login); expires_at never passes it. */
  @Column({ name: 'ends_at', type: 'timestamptz' })
  endsAt: Date;

  /** When the current refresh token dies unused; each refresh moves it forward, up to ends_at. */
  @Index('console_sessions_expires_at_idx')
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  /** As the browser sent it (cut to 256 characters), so the session list can say which device is which. */
  @Column({ name: 'user_agent', type: 'text', nullable: true })
  userAgent: string | null;

  @Column({ name: 'client_address', type: 'text', nullable: true })
  clientAddress: string | null;
}
