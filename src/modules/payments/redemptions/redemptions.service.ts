import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { formatUsd, parseUsd } from 'src/common/money/money';
import { domainSlot } from 'src/common/redis/key-slots';
import { throttleAddress } from 'src/common/http/client-address';
import { LedgerEntryResponseDto } from 'src/modules/ledger/dto/ledger-entry.dto';
import { RedemptionBatchCreateDto, RedemptionBatchDto } from 'src/modules/payments/dto/redemption.dto';
import { PaymentConfirmation } from 'src/modules/payments/confirmation/payment-confirmation.service';
import { PaymentThrottle } from 'src/modules/payments/payment-throttle';
import { RedemptionCodesRepository } from 'src/modules/payments/redemptions/redemption-codes.repository';
import {
  hashRedemptionCode,
  newRedemptionCode,
  normalizeRedemptionCode,
  redemptionCodePrefix,
} from 'src/modules/payments/redemptions/redemption-codes';
import { formatAmount } from 'src/values/amounts';
import { TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';
import { DataSource } from 'typeorm';

/** Tries per minute: plenty for a person typing a code, nothing for someone guessing one. */
const TRIES_PER_ACCOUNT = 10;
const TRIES_PER_ADDRESS = 30;

// A voided code answers like an unknown one: SPEC's 400, nothing a guesser could tell apart.
const unusable = () => ApiError.invalid('code is unknown, already used, expired or void.', 'code');

/** Redemption codes: the third way money comes in, paid through the same confirmation as any order. */
@Injectable()
export class RedemptionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly codes: RedemptionCodesRepository,
    private readonly orders: TopupOrdersRepository,
    private readonly confirmation: PaymentConfirmation,
    private readonly throttle: PaymentThrottle,
  ) {}

  /** A batch of codes, shown this once: only their hashes are kept. */
  async createBatch(dto: RedemptionBatchCreateDto): Promise<RedemptionBatchDto> {
    const amount = parseUsd(dto.amount);
    if (amount === null || amount <= 0n) {
      throw ApiError.invalid('amount must be a positive decimal string in USD with at most 9 decimals.', 'amount');
    }
    const expiresAt = dto.expiresAt === undefined ? null : new Date(dto.expiresAt);
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw ApiError.invalid('expiresAt must be in the future.', 'expiresAt');
    }
    const batchId = randomUUID();
    const codes = Array.from({ length: dto.count }, () => newRedemptionCode());
    const ids = await this.codes.insert(
      codes.map((code) => ({
        codeHash: hashRedemptionCode(normalizeRedemptionCode(code)!),
        codePrefix: redemptionCodePrefix(code),
        amount,
        batchId,
        expiresAt,
      })),
    );
    const shown = { batchId, amount: formatUsd(amount), expiresAt: expiresAt?.toISOString() ?? null };
    return {
      data: codes.map((code, index) => ({
        id: ids[index],
        code,
        prefix: redemptionCodePrefix(code),
        ...shown,
      })),
    };
  }

  /**
   * Claims the code and pays a top-up order of its amount in one transaction: the claim is a conditional
   * update, so of any number of concurrent tries exactly one finds the code unused, and the others 400.
   */
  async redeem(accountId: string, typed: string, ip: string): Promise<LedgerEntryResponseDto> {
    await this.admit(accountId, ip);
    const code = normalizeRedemptionCode(typed);
    if (code === null) {
      throw unusable();
    }
    const confirmation = await this.dataSource.transaction(async (manager) => {
      const claimed = await this.codes.claim(manager, hashRedemptionCode(code), accountId);
      if (!claimed) {
        throw unusable();
      }
      const { amount } = claimed;
      const order = await this.orders.create(
        {
          accountId,
          currency: 'USD',
          method: 'redemption',
          network: null,
          amount,
          credit: amount,
          rate: null,
          expiresAt: null,
        },
        manager,
      );
      await this.codes.setOrder(manager, claimed.id, order.id);
      const evidence = {
        provider: 'redemption',
        tradeNo: claimed.id,
        amount: formatAmount(amount, 'USD'),
        rawStatus: 'REDEEMED',
      };
      return this.confirmation.confirm(order.id, evidence, 'redemption', manager);
    });
    await this.confirmation.announce(confirmation);
    if (confirmation.outcome !== 'credited') {
      // A fresh order cannot have been paid before: reaching here means the invariant broke.
      throw new ApiError(ErrorKind.Internal, 'The redemption could not be credited.');
    }
    return LedgerEntryResponseDto.from(confirmation.entry);
  }

  /** Tries per account and per client address. */
  private admit(accountId: string, ip: string): Promise<void> {
    const windows = [
      // One slot for both windows (key-slots.ts): one script counts the try in each.
      { key: `${domainSlot('redeem')}:account:${accountId}`, limit: TRIES_PER_ACCOUNT },
      { key: `${domainSlot('redeem')}:ip:${throttleAddress(ip)}`, limit: TRIES_PER_ADDRESS },
    ];
    return this.throttle.admit(windows, 'redemption attempts');
  }
}
