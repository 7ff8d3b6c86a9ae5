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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
