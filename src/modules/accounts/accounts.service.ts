import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { formatUsd, parseUsd } from 'src/common/money/money';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { AccountResponseDto, AdjustmentResponseDto } from 'src/modules/accounts/dto/account.dto';
import { LedgerEntryResponseDto } from 'src/modules/ledger/dto/ledger-entry.dto';
import { LedgerEntryEntity } from 'src/modules/ledger/ledger-entry.entity';
import { BalanceGateService, BalanceSnapshot } from 'src/modules/ledger/balance-gate.service';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';

const SEARCH_LIMIT = 50;
/** Pushing an adjusted balance to Redis is tried again after this, doubling up to RESYNC_MAX_MS, for about 5 minutes. */
const RESYNC_FIRST_MS = 500;
const RESYNC_MAX_MS = 30_000;
const RESYNC_ATTEMPTS = 15;

@Injectable()
export class AccountsService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly ledger: LedgerRepository,
    private readonly gate: BalanceGateService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async get(accountId: string): Promise<AccountResponseDto> {
    return AccountResponseDto.from(await this.getEntity(accountId));
  }

  async search(email: string | undefined): Promise<AccountResponseDto[]> {
    const found = await this.accounts.searchByEmail(email?.trim().toLowerCase(), SEARCH_LIMIT);
    return found.map((account) => AccountResponseDto.from(account));
  }

  /**
   * An operator's credit or debit. With an idempotency key, a retried call returns the first
   * entry instead of applying twice.
   */
  async adjust(
    accountId: string,
    amountText: string,
    reason: string,
    idempotencyKey?: string,
  ): Promise<AdjustmentResponseDto> {
    const amount = parseUsd(amountText);
    if (amount === null || amount === 0n) {
      throw ApiError.invalid('amount must be a non-zero decimal string in USD with at most 9 decimals.', 'amount');
    }
    if (idempotencyKey !== undefined && !/^[\x21-\x7e]{1,200}$/.test(idempotencyKey)) {
      throw ApiError.invalid('Idempotency-Key must be 1 to 200 printable ASCII characters.', 'Idempotency-Key');
    }
    // Idempotency keys are the operator's, scoped to one account: the same key elsewhere is another adjustment.
    const reference = `adj:${accountId}:${idempotencyKey ?? randomUUID()}`;
    const result = await this.ledger.post({ accountId, kind: 'adjustment', amount, reference, description: reason });
    switch (result.outcome) {
      case 'account_not_found':
        throw new ApiError(ErrorKind.NotFound, `No account with id '${accountId}'.`, 'accountId');
      case 'insufficient_balance':
        throw new ApiError(
          ErrorKind.InvalidRequest,
          'The debit is larger than the balance; a balance never goes below zero.',
          'amount',
          'insufficient_balance',
        );
      case 'applied':
        // Admission reads balances from Redis: a credit is spendable at once, a debit limits at once.
        await this.pushBalance(accountId, { balance: result.entry.balanceAfter, version: result.version });
        return this.adjusted(accountId, result.entry);
      case 'out_of_range':
        throw ApiError.invalid('The balance would exceed the largest amount an account can hold.', 'amount');
      case 'replayed':
        if (result.entry.amount !== amount) {
          throw new ApiError(
            ErrorKind.Conflict,
            'This Idempotency-Key was already used for an adjustment of a different amount.',
            'Idempotency-Key',
            'idempotency_key_reused',
          );
        }
        return this.adjusted(accountId, result.entry);
    }
  }

  /**
   * The adjustment is committed whatever Redis does: its answer must say so. If Redis cannot take
   * the new balance now, its snapshot is stale (a debit not yet limiting admissions): the push is
   * retried in the background until Redis answers. It carries its version, so a late push never
   * overwrites a newer balance; a settlement of the account pushes a newer one meanwhile anyway. If
   * this process stops first, the worker's BalanceResyncService finds the snapshot behind and pushes it.
   */
  private async pushBalance(accountId: string, snapshot: BalanceSnapshot, attempt = 0): Promise<void> {
    try {
      await this.gate.sync(accountId, snapshot);
      if (attempt > 0) {
        this.logger.info({ accountId, attempt }, 'adjusted balance pushed to Redis after a retry');
      }
    } catch (error) {
      if (attempt + 1 >= RESYNC_ATTEMPTS) {
        this.logger.error(
          { accountId, err: (error as Error).message },
          'could not push an adjusted balance to Redis; the worker pushes it once Redis answers',
        );
        return;
      }
      this.logger.warn({ accountId, err: (error as Error).message }, 'could not push an adjusted balance to Redis');
      const delay = Math.min(RESYNC_MAX_MS, RESYNC_FIRST_MS * 2 ** attempt);
      setTimeout(() => void this.pushBalance(accountId, snapshot, attempt + 1), delay).unref();
    }
  }

  private async adjusted(accountId: string, entry: LedgerEntryEntity): Promise<AdjustmentResponseDto> {
    const account = await this.getEntity(accountId);
    return { entry: LedgerEntryResponseDto.from(entry), balance: formatUsd(account.balance) };
  }

  private async getEntity(accountId: string): Promise<AccountEntity> {
    const account = await this.accounts.findById(accountId);
    if (!account) {
      throw new ApiError(ErrorKind.NotFound, `No account with id '${accountId}'.`, 'accountId');
    }
    return account;
  }
}
