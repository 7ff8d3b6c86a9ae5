import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { channelIdParam } from 'src/common/http/params';
import { ChannelsService } from 'src/modules/channels/channels.service';
import { ChannelListResponseDto, ChannelResponseDto, ChannelUpsertDto } from 'src/modules/channels/dto/channel.dto';

@ApiTags('admin')
@AdminAuth()
@Controller('admin/channels')
export class AdminChannelsController {
  constructor(private readonly service: ChannelsService) {}

  @Put(':channelId')
  @ApiOkResponse({ type: ChannelResponseDto })
  upsertChannel(
    @Param('channelId', channelIdParam()) channelId: string,
    @Body() dto: ChannelUpsertDto,
  ): Promise<ChannelResponseDto> {
    return this.service.upsert(channelId, dto);
  }

  @Get()
  @ApiOkResponse({ type: ChannelListResponseDto })
  async listChannels(): Promise<ChannelListResponseDto> {
    return { data: await this.service.list() };
  }
}
