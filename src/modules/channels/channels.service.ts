import { Injectable } from '@nestjs/common';
import { SecretBox } from 'src/common/crypto/secret-box';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { ChannelsRepository } from 'src/modules/channels/channels.repository';
import { ChannelResponseDto, ChannelUpsertDto } from 'src/modules/channels/dto/channel.dto';

@Injectable()
export class ChannelsService {
  constructor(
    private readonly repository: ChannelsRepository,
    private readonly secrets: SecretBox,
    private readonly bus: InvalidationBus,
  ) {}

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
    });
    await this.bus.publish(InvalidationTopic.Catalog, id);
    return ChannelResponseDto.from(channel);
  }

  async list(): Promise<ChannelResponseDto[]> {
    return (await this.repository.list()).map((channel) => ChannelResponseDto.from(channel));
  }
}

/** Enough of the key for an operator to tell two keys apart; short keys show nothing at all. */
function hint(apiKey: string): string {
  return apiKey.length >= 16 ? `${apiKey.slice(0, 3)}…${apiKey.slice(-4)}` : '…';
}
