import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { FastifyRequest } from 'fastify';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { channelIdParam } from 'src/common/http/params';
import { ChannelTestDto, ChannelTestResultDto } from 'src/modules/channels/dto/channel.dto';
import { ChannelTestService } from 'src/modules/relay/channel-test/channel-test.service';

/** Beside the relay rather than in the channels module: a test speaks to the upstream through the same adapters. */
@ApiTags('admin')
@AdminAuth()
@Controller('admin/channels')
export class AdminChannelTestController {
  constructor(private readonly service: ChannelTestService) {}

  @Permission('catalog:write')
  @Post(':channelId/test')
  @HttpCode(200)
  @ApiOkResponse({ type: ChannelTestResultDto })
  testChannel(
    @Param('channelId', channelIdParam()) channelId: string,
    @Body() dto: ChannelTestDto,
    @Req() request: FastifyRequest,
  ): Promise<ChannelTestResultDto> {
    // The test's upstream request carries this request's id, as a customer's does.
    return this.service.test(channelId, dto, request.id);
  }
}
