import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Logger } from 'pino';
import { SecretBox } from 'src/common/crypto/secret-box';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ChannelEntity, ChannelType } from 'src/modules/channels/channel.entity';
import { ChannelTimeouts, effectiveTimeouts } from 'src/modules/channels/channel-timeouts';
import { ModelEntity, ModelKind } from 'src/modules/models/model.entity';
import { ModelsRepository } from 'src/modules/models/models.repository';

export interface CatalogChannel {
  id: string;
  type: ChannelType;
  baseUrl: string;
  /** Decrypted once per catalog load, never per request. */
  apiKey: string;
  priority: number;
  weight: number;
  timeouts: ChannelTimeouts;
  autoDisableAfterHours: number | null;
}

export interface CatalogRoute {
  channel: CatalogChannel;
  upstreamModel: string;
}

export interface CatalogModel {
  id: string;
  inputPrice: bigint;
  outputPrice: bigint;
  /** Absent: cached prompt tokens cost the input price. */
  cachedInputPrice?: bigint | null;
  /** Absent: prompt tokens written to the upstream's cache cost the input price. */
  cacheWriteInputPrice?: bigint | null;
  maxOutputTokens: number;
  vision: boolean;
  /** Which route serves it: chat completions or embeddings. */
  kind: ModelKind;
  rpm: number;
  tpm: number;
  created: number;
  ownedBy: string;
  routes: CatalogRoute[];
}

const OWNER_BY_TYPE: Record<ChannelType, string> = { openai: 'openai', anthropic: 'anthropic', gemini: 'google' };
// Changes arrive over the invalidation bus at once; the periodic reload only repairs a missed message.
const RELOAD_INTERVAL_MS = 30_000;

/**
 * The servable catalog (enabled models with at least one enabled route), held in memory so that the
 * completion path reads no database. Every API process reloads it when an operator changes a model or a channel.
 */
@Injectable()
export class CatalogService implements OnModuleInit, OnModuleDestroy {
  private models = new Map<string, CatalogModel>();
  private reloading: Promise<void> | null = null;
  private reloadAgain = false;
  private timer: NodeJS.Timeout | undefined;
  /** Channel id → the sealed key already reported as undecryptable. */
  private readonly reportedUnreadable = new Map<string, string>();

  constructor(
    private readonly repository: ModelsRepository,
    private readonly secrets: SecretBox,
    private readonly bus: InvalidationBus,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.reload();
    this.bus.on(InvalidationTopic.Catalog, () => void this.reload());
    this.timer = setInterval(() => void this.reload(), RELOAD_INTERVAL_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  get(modelId: string): CatalogModel | undefined {
    return this.models.get(modelId);
  }

  list(): CatalogModel[] {
    return [...this.models.values()];
  }

  /** Coalesces bursts: at most one load runs, and at most one more follows it. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    this.reloading = this.load()
      .catch((error: Error) => this.logger.error({ err: error.message }, 'catalog reload failed; keeping the last one'))
      .finally(() => {
        this.reloading = null;
        if (this.reloadAgain) {
          this.reloadAgain = false;
          void this.reload();
        }
      });
    return this.reloading;
  }

  private async load(): Promise<void> {
    const rows = await this.repository.loadCatalog();
    const channels = this.openChannels(rows);
    const next = new Map<string, CatalogModel>();
    for (const row of rows) {
      const model = this.toCatalogModel(row, channels);
      if (model) {
        next.set(model.id, model);
      }
    }
    this.models = next;
  }

  /**
   * Every enabled channel the catalog routes to, its key decrypted once. A key that cannot be
   * decrypted (wrong SECRETS_KEY, damaged row) takes only its own channel out of service.
   */
  private openChannels(rows: ModelEntity[]): Map<string, CatalogChannel> {
    const opened = new Map<string, CatalogChannel>();
    const unreadable = new Set<string>();
    for (const channel of rows.flatMap((row) => (row.routes ?? []).map((route) => route.channel))) {
      if (!channel?.enabled || opened.has(channel.id) || unreadable.has(channel.id)) {
        continue;
      }
      try {
        const apiKey = this.secrets.open(channel.apiKeySealed);
        opened.set(channel.id, { ...pick(channel, this.config.upstream), apiKey });
      } catch (error) {
        unreadable.add(channel.id);
        this.reportUnreadable(channel.id, channel.apiKeySealed, error as Error);
      }
    }
    [...this.reportedUnreadable.keys()]
      .filter((channelId) => !unreadable.has(channelId))
      .forEach((channelId) => this.reportedUnreadable.delete(channelId));
    metrics.catalogUnreadableChannels.set(unreadable.size);
    return opened;
  }

  /** Once per channel and sealed value, not on every periodic reload. */
  private reportUnreadable(channelId: string, sealed: string, error: Error): void {
    if (this.reportedUnreadable.get(channelId) === sealed) {
      return;
    }
    this.reportedUnreadable.set(channelId, sealed);
    this.logger.error(
      { channelId, err: error.message },
      'channel key cannot be decrypted; the channel is left out of the catalog until its key is set again',
    );
  }

  private toCatalogModel(row: ModelEntity, channels: Map<string, CatalogChannel>): CatalogModel | null {
    const routes = [...(row.routes ?? [])]
      .sort((a, b) => a.position - b.position)
      .flatMap((route) => {
        const channel = channels.get(route.channelId);
        return channel ? [{ upstreamModel: route.upstreamModel, channel }] : [];
      });
    if (!row.enabled || routes.length === 0) {
      return null;
    }
    return {
      id: row.id,
      inputPrice: row.inputPrice,
      outputPrice: row.outputPrice,
      cachedInputPrice: row.cachedInputPrice,
      cacheWriteInputPrice: row.cacheWriteInputPrice,
      maxOutputTokens: row.maxOutputTokens,
      vision: row.vision,
      kind: row.kind,
      rpm: row.rpm,
      tpm: row.tpm,
      created: Math.floor(row.createdAt.getTime() / 1000),
      ownedBy: OWNER_BY_TYPE[routes[0].channel.type],
      routes,
    };
  }
}

function pick(channel: ChannelEntity, defaults: AppConfig['upstream']): Omit<CatalogChannel, 'apiKey'> {
  return {
    id: channel.id,
    type: channel.type,
    baseUrl: channel.baseUrl,
    priority: channel.priority,
    weight: channel.weight,
    timeouts: effectiveTimeouts(channel, defaults),
    autoDisableAfterHours: channel.autoDisableAfterHours,
  };
}
