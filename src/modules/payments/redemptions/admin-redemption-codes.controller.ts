import { Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { CSV_CONTENT_TYPE } from 'src/common/http/csv';
import { uuidParam } from 'src/common/http/params';
import {
  AdminRedemptionCodeDto,
  AdminRedemptionCodePageDto,
  AdminRedemptionCodeQueryDto,
  RedemptionBatchVoidDto,
} from 'src/modules/payments/dto/redemption.dto';
import { RedemptionCodesAdminService } from 'src/modules/payments/redemptions/redemption-codes-admin.service';

const batchId = () => Param('batchId', uuidParam('batchId'));

/** Redemption codes after their creation (`POST /admin/redemption-codes`): lists, voiding, a batch's CSV. */
@ApiTags('admin')
@AdminAuth()
@Controller('admin/redemption-codes')
export class AdminRedemptionCodesController {
  constructor(private readonly service: RedemptionCodesAdminService) {}

  @Get()
  @Permission('read')
  @ApiOkResponse({ type: AdminRedemptionCodePageDto })
  listRedemptionCodes(@Query() query: AdminRedemptionCodeQueryDto): Promise<AdminRedemptionCodePageDto> {
    return this.service.list(query);
  }

  @Post(':codeId/void')
  @Permission('codes:write')
  @HttpCode(200)
  @ApiOkResponse({ type: AdminRedemptionCodeDto, description: 'Void: redeeming it answers 400 like an unknown code' })
  voidRedemptionCode(@Param('codeId', uuidParam('codeId')) codeId: string): Promise<AdminRedemptionCodeDto> {
    return this.service.void(codeId);
  }

  @Post('batches/:batchId/void')
  @Permission('codes:write')
  @HttpCode(200)
  @ApiOkResponse({ type: RedemptionBatchVoidDto })
  voidRedemptionBatch(@batchId() id: string): Promise<RedemptionBatchVoidDto> {
    return this.service.voidBatch(id);
  }

  @Get('batches/:batchId/codes.csv')
  @Permission('read')
  @ApiOkResponse({
    description: 'Every code of the batch as CSV (RFC 4180, spreadsheet-safe cells); never the codes themselves',
    content: {
      'text/csv': {
        schema: {
          type: 'string',
          example: 'prefix,value,status,redeemedBy,redeemedAt\r\nK7QX2,10,active,,\r\n',
        },
      },
    },
  })
  async exportRedemptionBatch(@batchId() id: string, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const csv = await this.service.batchCsv(id);
    // Set once there is CSV: an error (an unknown batch's 404) is answered as the JSON error object.
    void reply.header('content-type', CSV_CONTENT_TYPE);
    return csv;
  }
}
