import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { RedemptionCodeEntity } from 'src/modules/payments/redemptions/redemption-code.entity';
import { EntityManager, Repository } from 'typeorm';

export type NewRedemptionCode = Pick<
  RedemptionCodeEntity,
  'codeHash' | 'codePrefix' | 'amount' | 'batchId' | 'expiresAt'
>;

@Injectable()
export class RedemptionCodesRepository {
  constructor(@InjectRepository(RedemptionCodeEntity) private readonly codes: Repository<RedemptionCodeEntity>) {}

  /** Inserts the batch; the ids in the order given. */
  async insert(codes: NewRedemptionCode[]): Promise<string[]> {
    const result = await this.codes.insert(codes);
    return result.identifiers.map((identifier) => (identifier as { id: string }).id);
  }

  /**
   * Claims an unused, unvoided, unexpired code for the account in the caller's transaction: a conditional
   * update, so of concurrent claims exactly one gets the code. Null when there is none to claim.
   */
  async claim(
    manager: EntityManager,
    codeHash: string,
    accountId: string,
  ): Promise<{ id: string; amount: bigint } | null> {
    const [claimed] = await manager.query<{ id: string; amount: string }[]>(
      `WITH claimed AS (
         UPDATE redemption_codes SET redeemed_at = now(), redeemed_by = $2
         WHERE code_hash = $1 AND redeemed_at IS NULL AND voided_at IS NULL
           AND (expires_at IS NULL OR expires_at > now())
         RETURNING id, amount
       ) SELECT * FROM claimed`,
      [codeHash, accountId],
    );
    return claimed ? { id: claimed.id, amount: BigInt(claimed.amount) } : null;
  }

  /** Records the order a claimed code paid. */
  async setOrder(manager: EntityManager, id: string, orderId: string): Promise<void> {
    await manager.update(RedemptionCodeEntity, { id }, { orderId });
  }
}
