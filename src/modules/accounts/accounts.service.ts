import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { formatUsd, parseUsd } from 'src/common/money/money';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { AccountsRepository } from 'src/modules/accounts/accounts.repository';
import { AccountResponseDto, AdjustmentResponseDto } from 'src/modules/accounts/dto/account.dto';
import { LedgerEntryResponseDto } from 'src/modules/ledger/dto/ledger-entry.dto';
import { LedgerEntryEntity } from 'src/modules/ledger/ledger-entry.entity';
import { BalanceGate } from 'src/modules/ledger/balance-gate';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';

const SEARCH_LIMIT = 50;

@Injectable()
export class AccountsService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly ledger: LedgerRepository,
    private readonly gate: BalanceGate,
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
        await this.gate.sync(accountId, { balance: result.entry.balanceAfter, version: result.version });
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
