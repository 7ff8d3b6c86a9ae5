import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { MarginQueryDto, MarginReportDto } from 'src/modules/reports/dto/margin.dto';
import { ReportsService } from 'src/modules/reports/reports.service';

@ApiTags('admin')
@AdminAuth()
@Controller('admin/reports')
export class AdminReportsController {
  constructor(private readonly service: ReportsService) {}

  @Permission('read')
  @Get('margin')
  @ApiOkResponse({ type: MarginReportDto })
  getMarginReport(@Query() query: MarginQueryDto): Promise<MarginReportDto> {
    return this.service.margin(query);
  }
}
