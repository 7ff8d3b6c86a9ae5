import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { Cursor, decodeCursor, encodeCursor } from 'src/common/http/cursor';
import {
  AdminDepositDto,
  AdminDepositPageDto,
  AdminDepositQueryDto,
  DepositAddressDto,
  DepositAddressListDto,
} from 'src/modules/payments/chain/deposit.dto';
import { ChainDepositsRepository } from 'src/modules/payments/chain/chain-deposits.repository';
import { DepositAddressesService } from 'src/modules/payments/chain/deposit-addresses.service';

const validSeq = (position: Cursor) => position.length === 1 && /^\d{1,19}$/.test(position[0]);

/** USDT deposits as customers (their addresses) and operators (every transfer, credited or not) see them. */
@Injectable()
export class DepositsService {
  constructor(
    private readonly addresses: DepositAddressesService,
    private readonly deposits: ChainDepositsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async addressesOf(accountId: string): Promise<DepositAddressListDto> {
    const minimum = this.config.payments.chains.minDeposit;
    return { data: (await this.addresses.listFor(accountId)).map((row) => DepositAddressDto.from(row, minimum)) };
  }

  async adminList(query: AdminDepositQueryDto): Promise<AdminDepositPageDto> {
    const cursor = decodeCursor(query.cursor, validSeq);
    const rows = await this.deposits.list({
      network: query.network,
      status: query.status,
      beforeSeq: cursor?.[0] ?? null,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const more = rows.length > query.limit;
    return {
      data: page.map((row) => AdminDepositDto.from(row)),
      nextCursor: more ? encodeCursor([page[page.length - 1].seq]) : null,
    };
  }
}
