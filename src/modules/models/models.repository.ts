import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { ModelRouteEntity } from 'src/modules/models/model-route.entity';
import { ModelEntity } from 'src/modules/models/model.entity';
import { PricedModel } from 'src/modules/models/price-book/price-book';
import { DataSource, In, Repository } from 'typeorm';

export type ModelValues = Omit<ModelEntity, 'createdAt' | 'updatedAt' | 'routes'>;

@Injectable()
export class ModelsRepository {
  constructor(
    @InjectRepository(ModelEntity) private readonly models: Repository<ModelEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Replaces the model and all its routes in one transaction. */
  async replace(values: ModelValues, routes: Omit<ModelRouteEntity, 'modelId'>[]): Promise<ModelEntity> {
    await this.dataSource.transaction(async (manager) => {
      await manager.upsert(ModelEntity, values, ['id']);
      await manager.delete(ModelRouteEntity, { modelId: values.id });
      if (routes.length > 0) {
        await manager.insert(
          ModelRouteEntity,
          routes.map((route) => ({ ...route, modelId: values.id })),
        );
      }
    });
    return this.models.findOneOrFail({ where: { id: values.id }, relations: { routes: true } });
  }

  /** Deletes the model and (cascading) its routes; false when there was none. */
  async delete(id: string): Promise<boolean> {
    const result = await this.models.delete({ id });
    return (result.affected ?? 0) > 0;
  }

  list(): Promise<ModelEntity[]> {
    return this.models.find({ relations: { routes: true }, order: { id: 'ASC' } });
  }

  /** Every model's prices, by id. */
  async prices(): Promise<PricedModel[]> {
    return (await this.models.find({ order: { id: 'ASC' } })).map(pricesOf);
  }

  /**
   * In one transaction: reads the prices of `ids` (locked when writing, so nothing changes them
   * between the decision and the write), lets `decide` choose what to write, and writes it.
   */
  async reprice<T>(
    ids: string[],
    write: boolean,
    decide: (current: PricedModel[]) => { writes: PricedModel[]; result: T },
  ): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await manager.find(ModelEntity, {
        where: { id: In(ids) },
        order: { id: 'ASC' },
        ...(write ? { lock: { mode: 'pessimistic_write' as const } } : {}),
      });
      const { writes, result } = decide(rows.map(pricesOf));
      if (write) {
        for (const { id, ...prices } of writes) {
          await manager.update(ModelEntity, { id }, prices);
        }
      }
      return result;
    });
  }

  /** Everything the hot path needs, in one query: models with their routes and the routes' channels. */
  loadCatalog(): Promise<ModelEntity[]> {
    return this.models.find({ relations: { routes: { channel: true } }, order: { id: 'ASC' } });
  }
}

const pricesOf = (model: ModelEntity): PricedModel => ({
  id: model.id,
  inputPrice: model.inputPrice,
  outputPrice: model.outputPrice,
  cachedInputPrice: model.cachedInputPrice,
  cacheWriteInputPrice: model.cacheWriteInputPrice,
});
