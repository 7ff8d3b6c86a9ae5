import { Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { uuidParam } from 'src/common/http/params';
import { ApiKeysService } from 'src/modules/api-keys/api-keys.service';
import { AdminKeyDto, AdminKeyPageDto, AdminKeyQueryDto } from 'src/modules/api-keys/dto/admin-key.dto';

const keyId = () => Param('keyId', uuidParam('keyId'));

/**
 * An operator's hold on any account's keys. Every change drops the key from every API process's
 * cache over the bus, so it takes effect on the next request anywhere.
 */
@ApiTags('admin')
@AdminAuth()
@Controller('admin/keys')
export class AdminKeysController {
  constructor(private readonly service: ApiKeysService) {}

  @Get()
  @Permission('read')
  @ApiOkResponse({ type: AdminKeyPageDto })
  listAdminKeys(@Query() query: AdminKeyQueryDto): Promise<AdminKeyPageDto> {
    return this.service.listForOperator(query);
  }

  @Post(':keyId/disable')
  @Permission('access:write')
  @HttpCode(200)
  @ApiOkResponse({
    type: AdminKeyDto,
    description: 'Disabled by the operator: refused with 403 api_key_disabled; its owner cannot enable it.',
  })
  async disableKey(@keyId() id: string): Promise<AdminKeyDto> {
    return this.service.operatorView(await this.service.setStatusAsOperator(id, 'disabled'));
  }

  @Post(':keyId/enable')
  @Permission('access:write')
  @HttpCode(200)
  @ApiOkResponse({ type: AdminKeyDto, description: 'Enabled, whoever had disabled it.' })
  async enableKey(@keyId() id: string): Promise<AdminKeyDto> {
    return this.service.operatorView(await this.service.setStatusAsOperator(id, 'enabled'));
  }

  @Delete(':keyId')
  @Permission('access:write')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The key is deleted and can never be used again (401 invalid_api_key).' })
  async deleteKey(@keyId() id: string): Promise<void> {
    await this.service.setStatusAsOperator(id, 'deleted');
  }
}
