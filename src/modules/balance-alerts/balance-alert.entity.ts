import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { Check, Column, Entity, JoinColumn, OneToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * An account's low-balance alert: one mail when the balance falls below `threshold`, then none until
 * a credit lifts the balance back to it. `alertSent` is the latch: set by the one conditional UPDATE
 * that wins after a settlement, cleared by the ledger when a posting leaves the balance at or above
 * the threshold (POST_MANY_SQL). No row: no alert.
 */
@Entity('balance_alerts')
@Check('balance_alerts_threshold_positive', '"threshold" > 0')
export class BalanceAlertEntity {
  @PrimaryColumn({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @OneToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'balance_alerts_account_id_fkey' })
  account?: AccountEntity;

  /** Nano-dollars. */
  @Column({ type: 'bigint', transformer: bigintTransformer })
  threshold: bigint;

  @Column({ name: 'alert_sent', type: 'boolean', default: false })
  alertSent: boolean;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
