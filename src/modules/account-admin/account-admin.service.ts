import { Injectable } from '@nestjs/common';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { formatUsd } from 'src/common/money/money';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { AccountDetailDto, AdminAccountDto, OpenHoldDto } from 'src/modules/account-admin/dto/account-detail.dto';
import { monthlyTotals } from 'src/modules/account-admin/monthly-totals';
import { AccountGroupsRepository } from 'src/modules/account-groups/account-groups.repository';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { ApiKeyAuthenticator } from 'src/modules/api-keys/api-key.authenticator';
import { ApiKeysRepository } from 'src/modules/api-keys/api-keys.repository';
import { ApiKeysService } from 'src/modules/api-keys/api-keys.service';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { TopupPageQueryDto } from 'src/modules/payments/dto/topup.dto';
import { TopupsService } from 'src/modules/payments/topups/topups.service';
import { BillsQueryDto, UsageQueryDto } from 'src/modules/usage/dto/usage.dto';
import { UsageService } from 'src/modules/usage/usage.service';
import { PageQueryDto } from 'src/common/http/date-range.dto';

const FIRST_PAGE = 20;
const MAX_HOLDS_SHOWN = 100;
const DAILY_DAYS = 31;
const MONTHS = 12;

/** The operator's view of one account (its money, keys and what runs now) and its suspension. */
@Injectable()
export class AccountAdminService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly keys: ApiKeysRepository,
    private readonly keyViews: ApiKeysService,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly bus: InvalidationBus,
    private readonly gate: BalanceGateService,
    private readonly usage: UsageService,
    private readonly topups: TopupsService,
    private readonly groups: AccountGroupsRepository,
  ) {}

  async detail(accountId: string): Promise<AccountDetailDto> {
    const account = await this.account(accountId);
    const firstPage = <T extends object>(query: T): T => Object.assign(query, { limit: FIRST_PAGE });
    const [holds, keys, year, ledger, bills, topups] = await Promise.all([
      this.gate.openHolds(accountId, MAX_HOLDS_SHOWN),
      this.keyViews.list(accountId),
      // At most 366 rows from the daily rollup, whatever the account's traffic.
      this.usage.usage(accountId, Object.assign(new UsageQueryDto(), { from: firstOfMonthsAgo(MONTHS - 1) })),
      this.usage.ledger(accountId, firstPage(new PageQueryDto())),
      this.usage.operatorBills(accountId, firstPage(new BillsQueryDto())),
      this.topups.list(accountId, firstPage(new TopupPageQueryDto())),
    ]);
    const held = holds.reduce((sum, hold) => sum + hold.amount, 0n);
    return {
      account: AdminAccountDto.fromEntity(account),
      holds: { total: formatUsd(held), data: holds.map((hold) => OpenHoldDto.from(hold)) },
      keys,
      daily: year.filter((row) => (row.date ?? '') >= daysAgo(DAILY_DAYS - 1)),
      monthly: monthlyTotals(year),
      ledger,
      bills,
      topups,
    };
  }

  /**
   * Suspends (or lifts a suspension of) the account, then drops its keys from every API process's
   * cache, so the next request of any of its keys anywhere is refused (or served). Requests already
   * admitted run to their end and are billed like any other.
   */
  async setSuspended(accountId: string, suspended: boolean, reason?: string): Promise<AdminAccountDto> {
    const account = await this.accounts.setSuspension(
      accountId,
      suspended ? new Date() : null,
      suspended ? (reason ?? null) : null,
    );
    if (!account) {
      throw notFound(accountId);
    }
    await this.dropKeysFromCaches(accountId);
    return AdminAccountDto.fromEntity(account);
  }

  /**
   * Moves the account into a group, then drops its keys from every API process's cache like a
   * suspension: its next request anywhere is held and charged at the new group's prices. Requests
   * already admitted finish at the prices they were held at.
   */
  async setGroup(accountId: string, groupId: string): Promise<AdminAccountDto> {
    if (!(await this.groups.assign(accountId, groupId))) {
      await this.account(accountId);
      throw new ApiError(ErrorKind.NotFound, `No account group with id '${groupId}'.`, 'groupId');
    }
    await this.dropKeysFromCaches(accountId);
    return AdminAccountDto.fromEntity(await this.account(accountId));
  }

  async get(accountId: string): Promise<AdminAccountDto> {
    return AdminAccountDto.fromEntity(await this.account(accountId));
  }

  usageOf(accountId: string, query: UsageQueryDto) {
    return this.withAccount(accountId, () => this.usage.usage(accountId, query));
  }

  ledgerOf(accountId: string, query: PageQueryDto) {
    return this.withAccount(accountId, () => this.usage.ledger(accountId, query));
  }

  billsOf(accountId: string, query: BillsQueryDto) {
    return this.withAccount(accountId, () => this.usage.operatorBills(accountId, query));
  }

  topupsOf(accountId: string, query: TopupPageQueryDto) {
    return this.withAccount(accountId, () => this.topups.list(accountId, query));
  }

  /** The account's keys are read again, from Postgres, by each process's next request with them. */
  private async dropKeysFromCaches(accountId: string): Promise<void> {
    for (const keyHash of await this.keys.listLiveHashes(accountId)) {
      this.authenticator.forget(keyHash);
      await this.bus.publish(InvalidationTopic.ApiKey, keyHash);
    }
  }

  /** An unknown account is a 404, not an empty page. */
  private async withAccount<T>(accountId: string, read: () => Promise<T>): Promise<T> {
    await this.account(accountId);
    return read();
  }

  private async account(accountId: string): Promise<AccountEntity> {
    const account = await this.accounts.findById(accountId);
    if (!account) {
      throw notFound(accountId);
    }
    return account;
  }
}

const notFound = (accountId: string) =>
  new ApiError(ErrorKind.NotFound, `No account with id '${accountId}'.`, 'accountId');

function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

function firstOfMonthsAgo(months: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - months, 1)).toISOString().slice(0, 10);
}
