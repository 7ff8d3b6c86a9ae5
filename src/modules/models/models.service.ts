import { Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { parseUsd } from 'src/common/money/money';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { ChannelsRepository } from 'src/modules/channels/channels.repository';
import { ModelResponseDto, ModelRouteDto, ModelUpsertDto } from 'src/modules/models/dto/model.dto';
import { ModelsRepository } from 'src/modules/models/models.repository';

@Injectable()
export class ModelsService {
  constructor(
    private readonly models: ModelsRepository,
    private readonly channels: ChannelsRepository,
    private readonly bus: InvalidationBus,
  ) {}

  async upsert(id: string, dto: ModelUpsertDto): Promise<ModelResponseDto> {
    await this.checkRoutes(dto);
    const model = await this.models.replace(
      {
        id,
        inputPrice: parseUsd(dto.inputPrice)!,
        outputPrice: parseUsd(dto.outputPrice)!,
        cachedInputPrice: optionalPrice(dto.cachedInputPrice),
        cacheWriteInputPrice: optionalPrice(dto.cacheWriteInputPrice),
        maxOutputTokens: dto.maxOutputTokens,
        vision: dto.vision,
        kind: dto.kind,
        rpm: dto.rpm,
        tpm: dto.tpm,
        enabled: dto.enabled,
      },
      dto.routes.map((route, position) => ({
        channelId: route.channelId,
        upstreamModel: route.upstreamModel,
        position,
        costInputPrice: optionalPrice(route.costInputPrice),
        costOutputPrice: optionalPrice(route.costOutputPrice),
        costCachedInputPrice: optionalPrice(route.costCachedInputPrice),
        costCacheWriteInputPrice: optionalPrice(route.costCacheWriteInputPrice),
      })),
    );
    await this.bus.publish(InvalidationTopic.Catalog, id);
    return ModelResponseDto.from(model);
  }

  /** Removes the model from the catalog of every process; its usage history stays (bills keep the model's id). */
  async delete(id: string): Promise<void> {
    if (!(await this.models.delete(id))) {
      throw new ApiError(ErrorKind.NotFound, `No model with id '${id}'.`, 'modelId');
    }
    await this.bus.publish(InvalidationTopic.Catalog, id);
  }

  async list(): Promise<ModelResponseDto[]> {
    return (await this.models.list()).map((model) => ModelResponseDto.from(model));
  }

  private async checkRoutes(dto: ModelUpsertDto): Promise<void> {
    const ids = dto.routes.map((route) => route.channelId);
    const duplicate = ids.findIndex((id, index) => ids.indexOf(id) !== index);
    if (duplicate >= 0) {
      throw ApiError.invalid(`Channel '${ids[duplicate]}' appears twice in routes.`, `routes[${duplicate}].channelId`);
    }
    const halfPriced = dto.routes.findIndex((route) => !hasCostPrices(route) && anyCostPrice(route));
    if (halfPriced >= 0) {
      const missing = isPrice(dto.routes[halfPriced].costInputPrice) ? 'costOutputPrice' : 'costInputPrice';
      throw ApiError.invalid(
        'A route with cost prices needs both costInputPrice and costOutputPrice.',
        `routes[${halfPriced}].${missing}`,
      );
    }
    const existing = await this.channels.existingIds(ids);
    const missing = ids.findIndex((id) => !existing.has(id));
    if (missing >= 0) {
      throw ApiError.invalid(`No channel with id '${ids[missing]}'.`, `routes[${missing}].channelId`);
    }
  }
}

/** An optional price: absent or null leaves the tokens at the input price. */
const optionalPrice = (price: string | null | undefined): bigint | null =>
  price === undefined || price === null ? null : parseUsd(price)!;

const isPrice = (price: string | null | undefined): price is string => typeof price === 'string';
const hasCostPrices = (route: ModelRouteDto) => isPrice(route.costInputPrice) && isPrice(route.costOutputPrice);
const anyCostPrice = (route: ModelRouteDto) =>
  [route.costInputPrice, route.costOutputPrice, route.costCachedInputPrice, route.costCacheWriteInputPrice].some(
    isPrice,
  );
