import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Expired wallet orders are queried again for ORDER_LATE_PAYMENT_HOURS (docs/payments.md, "Late
 * payments"): when each was last asked, and an index for the worker's sweep of them.
 */
export class LatePaymentChecks1795710000001 implements MigrationInterface {
  name = 'LatePaymentChecks1795710000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "topup_orders"
            ADD "late_checked_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            CREATE INDEX "topup_orders_late_expiry_idx" ON "topup_orders" ("expires_at")
            WHERE "status" = 'expired'
                AND "closed_at" IS NULL
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."topup_orders_late_expiry_idx"`);
    await queryRunner.query(`ALTER TABLE "topup_orders" DROP COLUMN "late_checked_at"`);
  }
}
