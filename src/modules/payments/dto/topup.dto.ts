import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { CursorQueryDto } from 'src/common/http/date-range.dto';
import { formatUsd } from 'src/common/money/money';
import { MONEY_PATTERN } from 'src/common/openapi/money-property';
import { USDT_NETWORKS } from 'src/modules/payments/chain/usdt-network';
import { formatAmount, TOPUP_CURRENCIES, TopupCurrency } from 'src/values/amounts';
import {
  TOPUP_METHODS,
  TOPUP_STATUSES,
  TopupMethod,
  TopupOrderEntity,
  TopupStatus,
} from 'src/modules/payments/orders/topup-order.entity';

export const PAYABLE_CURRENCIES = ['CNY', 'USDT'] as const;
export const WALLET_METHODS = ['alipay', 'wechatpay'] as const;

export class TopupCreateDto {
  @ApiProperty({ enumName: 'TopupCurrency', enum: PAYABLE_CURRENCIES, example: 'CNY' })
  @IsIn(PAYABLE_CURRENCIES, { message: 'currency must be CNY or USDT' })
  currency: (typeof PAYABLE_CURRENCIES)[number];

  @ApiPropertyOptional({
    example: 'alipay',
    enumName: 'WalletMethod',
    enum: WALLET_METHODS,
    description: 'The wallet of a CNY top-up',
  })
  @IsOptional()
  @IsIn(WALLET_METHODS, { message: 'method must be alipay or wechatpay' })
  method?: (typeof WALLET_METHODS)[number];

  @ApiPropertyOptional({
    example: 'TRC20',
    enumName: 'UsdtNetwork',
    enum: USDT_NETWORKS,
    description: 'The chain of a USDT top-up',
  })
  @IsOptional()
  @IsIn(USDT_NETWORKS, { message: 'network must be TRC20 or ERC20' })
  network?: (typeof USDT_NETWORKS)[number];

  @ApiProperty({
    pattern: MONEY_PATTERN,
    description: "Decimal string in the order's currency: CNY with at most 2 places, USDT with at most 6",
    example: '100',
  })
  @IsString({ message: 'amount must be a decimal string such as "100" or "99.50"' })
  @MaxLength(32, { message: 'amount must be a decimal string such as "100" or "99.50"' })
  amount: string;
}

/** What the payer needs; which fields depends on the method. */
export class TopupInstructionsDto {
  @ApiPropertyOptional({
    example: 'https://qr.alipay.com/bax01234',
    description: 'Alipay: the content of the QR code to show the payer',
  })
  qrCode?: string;

  @ApiPropertyOptional({
    example: 'weixin://wxpay/bizpayurl?pr=abc123',
    description: 'WeChat Pay: the code URL to render as a QR code',
  })
  codeUrl?: string;

  @ApiPropertyOptional({ example: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', description: 'USDT: the deposit address' })
  address?: string;

  @ApiPropertyOptional({ example: 'TRC20', enumName: 'UsdtNetwork', enum: USDT_NETWORKS })
  network?: string;

  @ApiPropertyOptional({ example: 3, description: 'USDT: confirmations so far' })
  confirmations?: number;

  @ApiPropertyOptional({ example: 20, description: 'USDT: confirmations that credit' })
  required?: number;

  @ApiPropertyOptional({
    pattern: MONEY_PATTERN,
    example: '1.000000',
    description:
      'USDT: the least a transfer credits by itself; smaller transfers to the address add up, and credit once their sum reaches it',
  })
  minimum?: string;
}

export class TopupDto {
  @ApiProperty({ example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c', format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'paid', enumName: 'TopupStatus', enum: TOPUP_STATUSES })
  status: TopupStatus;

  @ApiProperty({
    example: 'CNY',
    enumName: 'TopupOrderCurrency',
    enum: TOPUP_CURRENCIES,
    description: 'USD for a redemption code',
  })
  currency: TopupCurrency;

  @ApiPropertyOptional({ example: 'alipay', enumName: 'TopupOrderMethod', enum: TOPUP_METHODS })
  method?: TopupMethod;

  @ApiPropertyOptional({ example: 'TRC20', enumName: 'UsdtNetwork', enum: USDT_NETWORKS })
  network?: string;

  @ApiProperty({
    pattern: MONEY_PATTERN,
    description: "In the order's currency, with its places (CNY 2, USDT 6)",
    example: '100.00',
  })
  amount: string;

  @ApiProperty({
    pattern: MONEY_PATTERN,
    description: 'USD the order adds to the balance, exact decimal string',
    example: '13.888888888',
  })
  credit: string;

  @ApiPropertyOptional({ description: 'CNY per USD, copied when the order was created', example: '7.2' })
  rate?: string;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  createdAt: string;

  @ApiPropertyOptional({ example: '2026-11-21T09:00:00.000Z', format: 'date-time' })
  expiresAt?: string;

  @ApiPropertyOptional({ example: '2026-11-21T08:35:12.000Z', format: 'date-time' })
  paidAt?: string;

  @ApiPropertyOptional({
    example: '2026-11-21T09:02:40.000Z',
    format: 'date-time',
    description:
      'USDT: when a transfer that paid it was found gone from the chain (a reorg); the credit stays until the operator reviews it',
  })
  reorgedAt?: string;

  @ApiProperty({ type: TopupInstructionsDto })
  instructions: TopupInstructionsDto;

  static from(order: TopupOrderEntity): TopupDto {
    return {
      id: order.id,
      status: order.status,
      currency: order.currency,
      ...(order.method && { method: order.method }),
      ...(order.network && { network: order.network }),
      amount: formatAmount(order.amount, order.currency),
      credit: formatUsd(order.credit),
      ...(order.rate && { rate: order.rate }),
      createdAt: order.createdAt.toISOString(),
      ...(order.expiresAt && { expiresAt: order.expiresAt.toISOString() }),
      ...(order.paidAt && { paidAt: order.paidAt.toISOString() }),
      ...(order.reorgedAt && { reorgedAt: order.reorgedAt.toISOString() }),
      instructions: order.instructions ?? {},
    };
  }
}

export class AdminTopupDto extends TopupDto {
  @ApiProperty({ example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c', format: 'uuid' })
  accountId: string;

  static fromOrder(order: TopupOrderEntity): AdminTopupDto {
    return { ...TopupDto.from(order), accountId: order.accountId };
  }
}

export class TopupPageDto {
  @ApiProperty({ type: [TopupDto] })
  data: TopupDto[];

  @ApiProperty({
    example: 'WyIyMDI2LTExLTIxVDA4OjMwOjAwWiIsInJlcV8xIl0',
    type: String,
    nullable: true,
    description: 'Pass as cursor for the next page; null on the last',
  })
  nextCursor: string | null;
}

export class AdminTopupPageDto {
  @ApiProperty({ type: [AdminTopupDto] })
  data: AdminTopupDto[];

  @ApiProperty({ example: 'WyIyMDI2LTExLTIxVDA4OjMwOjAwWiIsInJlcV8xIl0', type: String, nullable: true })
  nextCursor: string | null;
}

/** Top-ups are listed newest first, without a range of days. */
export class TopupPageQueryDto extends CursorQueryDto {}

export class AdminTopupQueryDto extends TopupPageQueryDto {
  @ApiPropertyOptional({ example: 'paid', enumName: 'TopupStatus', enum: TOPUP_STATUSES })
  @IsOptional()
  @IsIn(TOPUP_STATUSES, { message: 'status must be pending, paid or expired' })
  status?: TopupStatus;

  @ApiPropertyOptional({ format: 'uuid', example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c' })
  @IsOptional()
  @IsUUID('all', { message: 'accountId must be a UUID' })
  accountId?: string;
}
