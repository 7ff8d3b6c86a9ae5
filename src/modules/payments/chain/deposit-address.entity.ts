import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';

/** An account's own deposit address on one network: child 0/index of the operator's extended public key. */
@Entity('deposit_addresses')
// An index is given once per network and never again, whatever becomes of the account.
@Index('deposit_addresses_index_key', ['network', 'derivationIndex'], { unique: true })
@Index('deposit_addresses_account_key', ['accountId', 'network'], { unique: true })
@Index('deposit_addresses_address_key', ['network', 'address'], { unique: true })
export class DepositAddressEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne('AccountEntity', { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'deposit_addresses_account_id_fkey' })
  account?: unknown;

  @Column({ type: 'text' })
  network: UsdtNetwork;

  @Column({ name: 'derivation_index', type: 'integer' })
  derivationIndex: number;

  @Column({ type: 'text' })
  address: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** TRC20: the watcher's last visit, finished or not: the least recently visited go first. */
  @Column({ name: 'visited_at', type: 'timestamptz', nullable: true })
  visitedAt: Date | null;

  /** TRC20: the block timestamp (ms) up to which its transfers were processed; the next poll starts there. */
  @Column({ name: 'cursor_ms', type: 'bigint', nullable: true, transformer: bigintTransformer })
  cursorMs: bigint | null;

  /** TRC20: the last poll that finished. */
  @Column({ name: 'polled_at', type: 'timestamptz', nullable: true })
  polledAt: Date | null;
}
