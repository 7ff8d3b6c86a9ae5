import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { channelIdParam } from 'src/common/http/params';
import { ChannelsService } from 'src/modules/channels/channels.service';
import { ChannelListResponseDto, ChannelResponseDto, ChannelUpsertDto } from 'src/modules/channels/dto/channel.dto';

@ApiTags('admin')
@AdminAuth()
@Controller('admin/channels')
export class AdminChannelsController {
  constructor(private readonly service: ChannelsService) {}

  @Permission('catalog:write')
  @Put(':channelId')
  @ApiOkResponse({ type: ChannelResponseDto })
  upsertChannel(
    @Param('channelId', channelIdParam()) channelId: string,
    @Body() dto: ChannelUpsertDto,
  ): Promise<ChannelResponseDto> {
    return this.service.upsert(channelId, dto);
  }

  @Permission('read')
  @Get()
  @ApiOkResponse({ type: ChannelListResponseDto })
  async listChannels(): Promise<ChannelListResponseDto> {
    return { data: await this.service.list() };
  }

  @Permission('catalog:write')
  @Delete(':channelId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted; 409 while an enabled model routes to it, 404 when unknown' })
  deleteChannel(@Param('channelId', channelIdParam()) channelId: string): Promise<void> {
    return this.service.delete(channelId);
  }
}
