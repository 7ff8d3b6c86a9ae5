import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ConsoleAuth, ConsolePrincipal, CurrentPrincipal, PublicRoute } from 'src/common/decorators/auth.decorators';
import { uuidParam } from 'src/common/http/params';
import { ConsoleSessions } from 'src/modules/auth/console-sessions.service';
import { ConsoleSessionListDto, RefreshSessionDto, SessionTokensDto } from 'src/modules/auth/dto/session.dto';

/** Keeping a console session alive, listing the account's sessions and ending them. */
@ApiTags('console')
@Controller('console/auth')
export class SessionsController {
  constructor(private readonly sessions: ConsoleSessions) {}

  @Post('refresh')
  @PublicRoute()
  @HttpCode(200)
  @ApiOkResponse({
    type: SessionTokensDto,
    description:
      'The next access token and refresh token; the same pair again for the same refresh token within CONSOLE_REFRESH_GRACE_SECONDS of its trade',
  })
  @ApiUnauthorizedResponse({
    description:
      'Unknown, expired or revoked refresh token, a session past its CONSOLE_SESSION_MAX_DAYS, or a refresh token already traded and presented past the grace, which revokes its session (code invalid_session)',
  })
  refreshSession(@Body() dto: RefreshSessionDto): Promise<SessionTokensDto> {
    return this.sessions.refresh(dto.refreshToken);
  }

  @Get('sessions')
  @ConsoleAuth()
  @ApiOkResponse({ type: ConsoleSessionListDto })
  async listSessions(@CurrentPrincipal() principal: ConsolePrincipal): Promise<ConsoleSessionListDto> {
    return { data: await this.sessions.list(principal) };
  }

  @Delete('sessions/:sessionId')
  @ConsoleAuth()
  @HttpCode(204)
  @ApiNoContentResponse({ description: "That session's access and refresh tokens stop working" })
  @ApiNotFoundResponse({ description: 'No live session of this account has this id' })
  revokeSession(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Param('sessionId', uuidParam('sessionId')) sessionId: string,
  ): Promise<void> {
    return this.sessions.revokeOne(principal.accountId, sessionId);
  }

  @Post('logout')
  @ConsoleAuth()
  @HttpCode(204)
  @ApiNoContentResponse({ description: "This session's access and refresh tokens stop working" })
  logout(@CurrentPrincipal() principal: ConsolePrincipal): Promise<void> {
    return this.sessions.revoke(principal);
  }

  @Post('logout-all')
  @ConsoleAuth()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Every session of the account ends, this one included' })
  async logoutAll(@CurrentPrincipal() principal: ConsolePrincipal): Promise<void> {
    await this.sessions.revokeAll(principal.accountId);
  }
}
