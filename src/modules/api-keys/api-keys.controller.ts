import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { uuidParam } from 'src/common/http/params';
import { RequireVerifiedEmail } from 'src/modules/accounts/verified-email.guard';
import { ApiKeysService } from 'src/modules/api-keys/api-keys.service';
import {
  ApiKeyCreateDto,
  ApiKeyCreatedResponseDto,
  ApiKeyListResponseDto,
  ApiKeyResponseDto,
  ApiKeyUpdateDto,
} from 'src/modules/api-keys/dto/api-key.dto';

@ApiTags('console')
@ConsoleAuth()
@Controller('console/keys')
export class ApiKeysController {
  constructor(private readonly service: ApiKeysService) {}

  @Post()
  @RequireVerifiedEmail()
  @ApiCreatedResponse({ type: ApiKeyCreatedResponseDto })
  createApiKey(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Body() dto: ApiKeyCreateDto,
  ): Promise<ApiKeyCreatedResponseDto> {
    return this.service.create(principal.accountId, dto);
  }

  @Get()
  @ApiOkResponse({ type: ApiKeyListResponseDto })
  async listApiKeys(@CurrentPrincipal() principal: ConsolePrincipal): Promise<ApiKeyListResponseDto> {
    return { data: await this.service.list(principal.accountId) };
  }

  @Patch(':keyId')
  @ApiOkResponse({ type: ApiKeyResponseDto })
  updateApiKey(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Param('keyId', uuidParam('keyId')) keyId: string,
    @Body() dto: ApiKeyUpdateDto,
  ): Promise<ApiKeyResponseDto> {
    return this.service.update(principal.accountId, keyId, dto);
  }

  @Delete(':keyId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'The key is deleted and can never be used again.' })
  deleteApiKey(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Param('keyId', uuidParam('keyId')) keyId: string,
  ): Promise<void> {
    return this.service.delete(principal.accountId, keyId);
  }
}
