import { Inject, Injectable } from '@nestjs/common';
import { SecretBox } from 'src/common/crypto/secret-box';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ChannelEntity } from 'src/modules/channels/channel.entity';
import { effectiveTimeouts } from 'src/modules/channels/channel-timeouts';
import { ChannelsRepository } from 'src/modules/channels/channels.repository';
import { ChannelResponseDto, ChannelUpsertDto } from 'src/modules/channels/dto/channel.dto';
import { FRESH } from 'src/modules/channels/health/breaker-policy';
import { ChannelBreaker } from 'src/modules/channels/health/channel-breaker.service';

@Injectable()
export class ChannelsService {
  constructor(
    private readonly repository: ChannelsRepository,
    private readonly secrets: SecretBox,
    private readonly bus: InvalidationBus,
    private readonly breaker: ChannelBreaker,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Creates or replaces the channel; its health starts afresh, since the operator may have fixed what failed. */
  async upsert(id: string, dto: ChannelUpsertDto): Promise<ChannelResponseDto> {
    const channel = await this.repository.upsert({
      id,
      type: dto.type,
      baseUrl: dto.baseUrl.replace(/\/+$/, ''),
      apiKeySealed: this.secrets.seal(dto.apiKey),
      apiKeyHint: hint(dto.apiKey),
      priority: dto.priority,
      weight: dto.weight,
      enabled: dto.enabled,
      connectTimeoutMs: dto.timeouts?.connectMs ?? null,
      firstByteTimeoutMs: dto.timeouts?.firstByteMs ?? null,
      streamFirstByteTimeoutMs: dto.timeouts?.streamFirstByteMs ?? null,
      silenceTimeoutMs: dto.timeouts?.silenceMs ?? null,
      autoDisableAfterHours: dto.autoDisableAfterHours ?? null,
    });
    await this.breaker.reset(id);
    await this.bus.publish(InvalidationTopic.Catalog, id);
    return this.toResponse(channel);
  }

  async list(): Promise<ChannelResponseDto[]> {
    const channels = await this.repository.list();
    const health = await this.breaker.health(channels.map((channel) => channel.id));
    return channels.map((channel) => this.toResponse(channel, health.get(channel.id)));
  }

  /** 409 while an enabled model routes to it: the operator removes the route (or disables the model) first. */
  async delete(id: string): Promise<void> {
    const outcome = await this.repository.deleteUnlessRouted(id);
    if ('missing' in outcome) {
      throw new ApiError(ErrorKind.NotFound, `No channel with id '${id}'.`, 'channelId');
    }
    if ('routedBy' in outcome) {
      const models = outcome.routedBy.map((model) => `'${model}'`).join(', ');
      throw new ApiError(
        ErrorKind.Conflict,
        `Channel '${id}' is still a route of the enabled model(s) ${models}: remove those routes first.`,
        'channelId',
      );
    }
    await this.breaker.reset(id);
    await this.bus.publish(InvalidationTopic.Catalog, id);
  }

  private toResponse(channel: ChannelEntity, health = FRESH): ChannelResponseDto {
    return ChannelResponseDto.from(channel, effectiveTimeouts(channel, this.config.upstream), health);
  }
}

/** Enough of the key for an operator to tell two keys apart; short keys show nothing at all. */
function hint(apiKey: string): string {
  return apiKey.length >= 16 ? `${apiKey.slice(0, 3)}…${apiKey.slice(-4)}` : '…';
}
