import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { RequestLogPageDto, RequestLogQueryDto } from 'src/modules/usage/dto/request-log.dto';
import { RequestLogService } from 'src/modules/usage/request-log.service';

/** The request log: support finds a request by its ids, account, key, model, channel or outcome. */
@ApiTags('admin')
@AdminAuth()
@Controller('admin/requests')
export class AdminRequestsController {
  constructor(private readonly service: RequestLogService) {}

  @Get()
  @Permission('read')
  @ApiOkResponse({ type: RequestLogPageDto, description: 'Requests newest first: metadata only, never content' })
  listRequests(@Query() query: RequestLogQueryDto): Promise<RequestLogPageDto> {
    return this.service.page(query);
  }
}
