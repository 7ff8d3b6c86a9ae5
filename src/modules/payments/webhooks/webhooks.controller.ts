import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { FastifyReply, FastifyRequest } from 'fastify';
import { PublicRoute } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { rawBodyOf } from 'src/modules/payments/webhooks/webhook-bodies';
import { WebhooksService } from 'src/modules/payments/webhooks/webhooks.service';

/** WeChat Pay's own error shape, which its notifications expect instead of the error object (docs/errors.md). */
class WechatpayRefusalDto {
  @ApiProperty({ enum: ['FAIL'], enumName: 'WechatpayAnswerCode', example: 'FAIL' })
  code: 'FAIL';

  @ApiProperty({ example: 'signature mismatch' })
  message: string;
}

/** Where the wallets notify. No bearer token: the provider's signature is the authentication. */
@ApiTags('webhooks')
@PublicRoute()
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('alipay')
  @HttpCode(200)
  @ApiOperation({ summary: "Alipay's asynchronous notification (form-encoded, RSA2-signed)" })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiResponse({
    status: 200,
    description: 'Plain `success` once the credit is committed (or was already); otherwise `fail`',
    content: { 'text/plain': { schema: { type: 'string', enum: ['success', 'fail'], example: 'success' } } },
  })
  receiveAlipayNotification(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.answer('alipay', request, reply);
  }

  @Post('wechatpay')
  @HttpCode(204)
  @ApiOperation({
    summary: 'WeChat Pay APIv3 notification (JSON, Wechatpay-* signature headers, AES-256-GCM resource)',
  })
  @ApiConsumes('application/json')
  @ApiResponse({ status: 204, description: 'The credit is committed (or was already)' })
  @ApiResponse({ status: 400, description: 'The notification is refused', type: WechatpayRefusalDto })
  @ApiResponse({ status: 500, description: 'Not committed; the wallet resends', type: WechatpayRefusalDto })
  receiveWechatpayNotification(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.answer('wechatpay', request, reply);
  }

  private async answer(method: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const answer = await this.webhooks.receive(method, { headers: request.headers, body: rawBodyOf(request) });
    if (!answer) {
      throw new ApiError(ErrorKind.NotFound, `${method} is not configured on this gateway.`);
    }
    void reply.status(answer.status);
    if (answer.contentType) {
      void reply.header('content-type', answer.contentType);
    }
    await reply.send(answer.body ?? '');
  }
}
