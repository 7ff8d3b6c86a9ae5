import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CursorQueryDto } from 'src/common/http/date-range.dto';
import { MONEY_PATTERN } from 'src/common/openapi/money-property';
import { ChainDepositEntity, DEPOSIT_STATUSES, DepositStatus } from 'src/modules/payments/chain/chain-deposit.entity';
import { DepositAddressEntity } from 'src/modules/payments/chain/deposit-address.entity';
import { USDT_NETWORKS, UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { formatAmount } from 'src/values/amounts';

export class DepositAddressDto {
  @ApiProperty({ example: 'TRC20', enumName: 'UsdtNetwork', enum: USDT_NETWORKS })
  network: UsdtNetwork;

  @ApiProperty({
    description: 'Send USDT on this network only to this address',
    example: 'TJRyWwFs9wTFGZg3JbrVriFbNfCug5tDeC',
  })
  address: string;

  @ApiProperty({
    pattern: MONEY_PATTERN,
    example: '1.000000',
    description:
      'The least a transfer credits by itself; smaller transfers to the address add up, and credit once their sum reaches it',
  })
  minimum: string;

  static from(row: DepositAddressEntity, minimum: bigint): DepositAddressDto {
    return { network: row.network, address: row.address, minimum: formatAmount(minimum, 'USDT') };
  }
}

export class DepositAddressListDto {
  @ApiProperty({ type: [DepositAddressDto], description: 'One per network the gateway accepts' })
  data: DepositAddressDto[];
}

/** A transfer to one of the accounts' addresses, as the operator sees it. */
export class AdminDepositDto {
  @ApiProperty({ example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c', format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'TRC20', enumName: 'UsdtNetwork', enum: USDT_NETWORKS })
  network: UsdtNetwork;

  @ApiProperty({
    example: 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90',
    description: 'The transaction id (TRON) or hash (Ethereum)',
  })
  txid: string;

  @ApiProperty({
    example: 0,
    description:
      "The log's index in its block (ERC20), or the event's index in its transaction as TronGrid's events name it (TRC20; a deposit recorded before that counted its place among the transaction's transfers to its address)",
  })
  eventIndex: number;

  @ApiProperty({ example: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE' })
  address: string;

  @ApiProperty({ example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c', format: 'uuid' })
  accountId: string;

  @ApiProperty({ pattern: MONEY_PATTERN, description: 'USDT, 6 decimals', example: '0.500000' })
  amount: string;

  @ApiProperty({
    example: 'credited',
    enumName: 'DepositStatus',
    enum: DEPOSIT_STATUSES,
    description:
      'below_minimum: recorded, not credited yet: it credits with the next ones to its address once their sum reaches USDT_MIN_DEPOSIT. ' +
      'credited: paid its order (orderId), alone or with the small ones before it. ' +
      'reorged: gone from the chain after it was recorded (ERC20); if it had credited, the credit stands and the order shows reorgedAt: review it by hand',
  })
  status: DepositStatus;

  @ApiPropertyOptional({
    example: '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c',
    format: 'uuid',
    description: 'The top-up it paid (several small deposits may share one)',
  })
  orderId?: string;

  @ApiProperty({ example: '2026-11-21T08:30:00.000Z', format: 'date-time' })
  createdAt: string;

  static from(row: ChainDepositEntity): AdminDepositDto {
    return {
      id: row.id,
      network: row.network,
      txid: row.txid,
      eventIndex: row.eventIndex,
      address: row.address,
      accountId: row.accountId,
      amount: formatAmount(row.amount, 'USDT'),
      status: row.status,
      ...(row.orderId && { orderId: row.orderId }),
      createdAt: row.createdAt.toISOString(),
    };
  }
}

export class AdminDepositPageDto {
  @ApiProperty({ type: [AdminDepositDto] })
  data: AdminDepositDto[];

  @ApiProperty({ example: 'WyIyMDI2LTExLTIxVDA4OjMwOjAwWiIsInJlcV8xIl0', type: String, nullable: true })
  nextCursor: string | null;
}

export class AdminDepositQueryDto extends CursorQueryDto {
  @ApiPropertyOptional({ enum: DEPOSIT_STATUSES, enumName: 'DepositStatus', example: 'below_minimum' })
  @IsOptional()
  @IsIn(DEPOSIT_STATUSES, { message: 'status must be credited, below_minimum or reorged' })
  status?: DepositStatus;

  @ApiPropertyOptional({ enum: USDT_NETWORKS, enumName: 'UsdtNetwork', example: 'TRC20' })
  @IsOptional()
  @IsIn(USDT_NETWORKS, { message: 'network must be TRC20 or ERC20' })
  network?: UsdtNetwork;
}
