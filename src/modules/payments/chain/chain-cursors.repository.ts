import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { ChainCursorEntity } from 'src/modules/payments/chain/chain-cursor.entity';
import { EntityManager, Repository } from 'typeorm';

@Injectable()
export class ChainCursorsRepository {
  constructor(@InjectRepository(ChainCursorEntity) private readonly cursors: Repository<ChainCursorEntity>) {}

  /** The last block processed, or null before the first run. */
  async get(network: string): Promise<bigint | null> {
    return (await this.cursors.findOneBy({ network }))?.block ?? null;
  }

  /** In the caller's transaction, with the credits of the blocks up to `block`. */
  async save(manager: EntityManager, network: string, block: bigint): Promise<void> {
    await manager.upsert(ChainCursorEntity, { network, block }, ['network']);
  }
}
