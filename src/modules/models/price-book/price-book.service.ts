import { Injectable } from '@nestjs/common';
import { ApiError } from 'src/common/errors/api-error';
import { rawJsonOf } from 'src/common/http/json-body';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { ModelsRepository } from 'src/modules/models/models.repository';
import { parseLosslessJson } from 'src/modules/models/price-book/lossless-json';
import {
  diffPriceBook,
  PriceBookFormat,
  PricedModel,
  readGatewayPriceBook,
  readLiteLlmPriceBook,
} from 'src/modules/models/price-book/price-book';
import { PriceBookDiffDto, PriceBookDto, PriceBookEntryDto } from 'src/modules/models/price-book/price-book.dto';

/** The catalog's prices as one document: exported, and imported in one transaction (docs/operators.md, "Price books"). */
@Injectable()
export class PriceBooksService {
  constructor(
    private readonly models: ModelsRepository,
    private readonly bus: InvalidationBus,
  ) {}

  async export(): Promise<PriceBookDto> {
    return { models: (await this.models.prices()).map((model) => PriceBookEntryDto.fromModel(model)) };
  }

  async import(body: unknown, format: PriceBookFormat, dryRun: boolean): Promise<PriceBookDiffDto> {
    const { book, unknown } = format === 'litellm' ? await this.readLiteLlm(body) : this.readGateway(body);
    const diff = await this.models.reprice(
      book.map((model) => model.id),
      !dryRun,
      (current) => {
        const found = diffPriceBook(current, book);
        const changed = new Set(found.changed.map((change) => change.id));
        return { writes: book.filter((model) => changed.has(model.id)), result: found };
      },
    );
    if (!dryRun && diff.changed.length > 0) {
      // The same message a single model's PUT sends: every API process reloads its in-memory catalog.
      await this.bus.publish(InvalidationTopic.Catalog, 'price-book');
    }
    return PriceBookDiffDto.from({ ...diff, unknown: [...unknown, ...diff.unknown] }, dryRun);
  }

  private readGateway(body: unknown): { book: PricedModel[]; unknown: string[] } {
    return { book: readGatewayPriceBook(body), unknown: [] };
  }

  /** Reads the number literals from the bytes as received: JSON.parse already rounded them to floats. */
  private async readLiteLlm(body: unknown): Promise<{ book: PricedModel[]; unknown: string[] }> {
    const raw = typeof body === 'object' && body !== null ? rawJsonOf(body) : undefined;
    if (!raw) {
      throw ApiError.invalid("Send LiteLLM's price file as it is: a JSON object in UTF-8.");
    }
    const known = new Set((await this.models.prices()).map((model) => model.id));
    const { models, unknown } = readLiteLlmPriceBook(parseLosslessJson(raw.bytes.toString('utf8')), known);
    return { book: models, unknown };
  }
}
