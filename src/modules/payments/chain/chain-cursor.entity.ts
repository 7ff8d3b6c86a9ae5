import { bigintTransformer } from 'src/common/database/bigint.transformer';
import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** ERC20: the last block whose transfers were processed; the watcher resumes after it. */
@Entity('chain_cursors')
export class ChainCursorEntity {
  @PrimaryColumn({ type: 'text' })
  network: string;

  @Column({ type: 'bigint', transformer: bigintTransformer })
  block: bigint;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
