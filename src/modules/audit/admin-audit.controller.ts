import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { AuditService } from 'src/modules/audit/audit.service';
import { AuditPageDto, AuditQueryDto } from 'src/modules/audit/dto/audit.dto';

@ApiTags('admin')
@AdminAuth()
@Controller('admin/audit')
export class AdminAuditController {
  constructor(private readonly service: AuditService) {}

  @Permission('read')
  @Get()
  @ApiOkResponse({ type: AuditPageDto })
  listAuditEntries(@Query() query: AuditQueryDto): Promise<AuditPageDto> {
    return this.service.list(query);
  }
}
