import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal } from 'src/common/decorators/auth.decorators';
import { AccountsService } from 'src/modules/accounts/accounts.service';
import { AccountResponseDto } from 'src/modules/accounts/dto/account.dto';

@ApiTags('console')
@ConsoleAuth()
@Controller('console/account')
export class ConsoleAccountController {
  constructor(private readonly service: AccountsService) {}

  @Get()
  @ApiOkResponse({ type: AccountResponseDto })
  getAccount(@CurrentPrincipal() principal: ConsolePrincipal): Promise<AccountResponseDto> {
    return this.service.get(principal.accountId);
  }
}
