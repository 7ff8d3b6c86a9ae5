import { Check, Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export const CHANNEL_TYPES = ['openai', 'anthropic', 'gemini'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

@Entity('channels')
@Check('channels_type_check', `"type" IN ('openai', 'anthropic', 'gemini')`)
export class ChannelEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ type: 'text' })
  type: ChannelType;

  @Column({ name: 'base_url', type: 'text' })
  baseUrl: string;

  /** The upstream API key, sealed with SecretBox (AES-256-GCM). */
  @Column({ name: 'api_key_sealed', type: 'text' })
  apiKeySealed: string;

  /** Display hint only (e.g. `sk-…9xQz`), so operators can tell keys apart without decrypting. */
  @Column({ name: 'api_key_hint', type: 'text' })
  apiKeyHint: string;

  @Column({ type: 'integer', default: 0 })
  priority: number;

  @Column({ type: 'integer', default: 1 })
  weight: number;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  // Timeouts of this channel; null: the process default (UPSTREAM_*_TIMEOUT_MS).
  @Column({ name: 'connect_timeout_ms', type: 'integer', nullable: true })
  connectTimeoutMs: number | null;

  @Column({ name: 'first_byte_timeout_ms', type: 'integer', nullable: true })
  firstByteTimeoutMs: number | null;

  @Column({ name: 'stream_first_byte_timeout_ms', type: 'integer', nullable: true })
  streamFirstByteTimeoutMs: number | null;

  @Column({ name: 'silence_timeout_ms', type: 'integer', nullable: true })
  silenceTimeoutMs: number | null;

  /** Hours (fractions allowed) the breaker may stay open before the channel is switched off; null: never. */
  @Column({ name: 'auto_disable_after_hours', type: 'double precision', nullable: true })
  autoDisableAfterHours: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
