import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { formatUsd } from 'src/common/money/money';
import { PaymentSettings } from 'src/modules/payments/settings/payment-settings.service';

/** Alipay's and WeChat Pay's longest payment window is far longer; a day is plenty for a QR code. */
export const MAX_ORDER_TTL_MINUTES = 1_440;

export class PaymentSettingsDto {
  @ApiProperty({
    description: 'CNY per USD, at most 6 decimals; null until set (CNY top-ups are off)',
    example: '7.2',
    nullable: true,
    type: String,
  })
  cnyPerUsd: string | null;

  @ApiProperty({ description: 'The least one order may credit, USD', example: '1' })
  minTopupUsd: string;

  @ApiProperty({ description: 'The most one order may credit, USD', example: '10000' })
  maxTopupUsd: string;

  @ApiProperty({ description: 'How long an order waits for its payment', example: 30 })
  orderTtlMinutes: number;

  static from(settings: PaymentSettings): PaymentSettingsDto {
    return {
      cnyPerUsd: settings.cnyPerUsd,
      minTopupUsd: formatUsd(settings.minTopupUsd),
      maxTopupUsd: formatUsd(settings.maxTopupUsd),
      orderTtlMinutes: settings.orderTtlMinutes,
    };
  }
}

export class PaymentSettingsUpdateDto {
  @ApiProperty({ description: 'CNY per USD, positive, at most 6 decimals', example: '7.2' })
  @IsString({ message: 'cnyPerUsd must be a decimal string such as "7.2"' })
  @MaxLength(16)
  cnyPerUsd: string;

  @ApiProperty({ description: 'USD, exact decimal string', example: '1' })
  @IsString({ message: 'minTopupUsd must be a decimal string in USD' })
  @MaxLength(32)
  minTopupUsd: string;

  @ApiProperty({ description: 'USD, exact decimal string', example: '10000' })
  @IsString({ message: 'maxTopupUsd must be a decimal string in USD' })
  @MaxLength(32)
  maxTopupUsd: string;

  @ApiProperty({ minimum: 1, maximum: MAX_ORDER_TTL_MINUTES, example: 30 })
  @IsInt({ message: `orderTtlMinutes must be an integer from 1 to ${MAX_ORDER_TTL_MINUTES}` })
  @Min(1, { message: `orderTtlMinutes must be an integer from 1 to ${MAX_ORDER_TTL_MINUTES}` })
  @Max(MAX_ORDER_TTL_MINUTES, { message: `orderTtlMinutes must be an integer from 1 to ${MAX_ORDER_TTL_MINUTES}` })
  orderTtlMinutes: number;
}
