import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A referral takes effect at the invitee's e-mail verification or its first paid top-up, whichever
 * comes first (docs/console.md, "Referrals"): accounts record when their first top-up was paid,
 * filled in here from the orders already paid.
 */
export class ReferralOnFirstTopup1795710000000 implements MigrationInterface {
  name = 'ReferralOnFirstTopup1795710000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD "first_paid_topup_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            UPDATE "accounts" a SET "first_paid_topup_at" = p."first_paid_at"
            FROM (
                SELECT "account_id", MIN("paid_at") AS "first_paid_at" FROM "topup_orders"
                WHERE "status" = 'paid' GROUP BY "account_id"
            ) p
            WHERE p."account_id" = a."id"
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "accounts" DROP COLUMN "first_paid_topup_at"`);
  }
}
