import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Permission } from 'src/common/decorators/admin-permissions';
import { AdminAuth } from 'src/common/decorators/auth.decorators';
import { groupIdParam } from 'src/common/http/params';
import { AccountGroupsAdminService } from 'src/modules/account-admin/account-groups-admin.service';
import {
  AccountGroupDto,
  AccountGroupListDto,
  AccountGroupUpsertDto,
} from 'src/modules/account-admin/dto/account-group.dto';

const groupId = () => Param('groupId', groupIdParam());

/** Tiers of customers: what an account pays is the catalog price times its group's multiplier. */
@ApiTags('admin')
@AdminAuth()
@Controller('admin/groups')
export class AdminAccountGroupsController {
  constructor(private readonly service: AccountGroupsAdminService) {}

  @Get()
  @Permission('read')
  @ApiOkResponse({ type: AccountGroupListDto })
  async listAccountGroups(): Promise<AccountGroupListDto> {
    return { data: await this.service.list() };
  }

  @Get(':groupId')
  @Permission('read')
  @ApiOkResponse({ type: AccountGroupDto })
  getAccountGroup(@groupId() id: string): Promise<AccountGroupDto> {
    return this.service.get(id);
  }

  /** Creates the group, or replaces its terms; its accounts' next requests use them on every API process. */
  @Put(':groupId')
  // A group's terms are prices, like a price book's.
  @Permission('catalog:write')
  @ApiOkResponse({ type: AccountGroupDto })
  upsertAccountGroup(@groupId() id: string, @Body() dto: AccountGroupUpsertDto): Promise<AccountGroupDto> {
    return this.service.upsert(id, dto);
  }

  @Delete(':groupId')
  @Permission('catalog:write')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The group is gone (409 while accounts are in it, or for `default`).' })
  deleteAccountGroup(@groupId() id: string): Promise<void> {
    return this.service.delete(id);
  }
}
