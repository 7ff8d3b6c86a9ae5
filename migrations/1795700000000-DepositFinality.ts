import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Small deposits add up, and ERC20 deposits are watched until finalized (docs/payments.md, "USDT
 * deposits"): a deposit may be `reorged` (gone from the chain after it was recorded), keeps the hash
 * of its block, and is final once its block is. Deposits recorded before this migration were credited
 * at the configured depth without a block hash to compare: they are taken as final.
 */
export class DepositFinality1795700000000 implements MigrationInterface {
  name = 'DepositFinality1795700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chain_deposits" DROP CONSTRAINT "chain_deposits_status_check"`);
    await queryRunner.query(`
            ALTER TABLE "chain_deposits"
            ADD CONSTRAINT "chain_deposits_status_check" CHECK ("status" IN ('credited', 'below_minimum', 'reorged'))
        `);
    await queryRunner.query(`ALTER TABLE "chain_deposits" ADD "block_hash" text`);
    await queryRunner.query(`ALTER TABLE "chain_deposits" ADD "finalized_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`UPDATE "chain_deposits" SET "finalized_at" = "created_at"`);
    await queryRunner.query(`
            CREATE INDEX "chain_deposits_unfinalized_idx" ON "chain_deposits" ("network", "seq") WHERE "finalized_at" IS NULL
        `);
    await queryRunner.query(`
            CREATE INDEX "chain_deposits_below_minimum_idx" ON "chain_deposits" ("network", "address") WHERE "status" = 'below_minimum'
        `);
    await queryRunner.query(`ALTER TABLE "topup_orders" ADD "reorged_at" TIMESTAMP WITH TIME ZONE`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "topup_orders" DROP COLUMN "reorged_at"`);
    await queryRunner.query(`DROP INDEX "public"."chain_deposits_below_minimum_idx"`);
    await queryRunner.query(`DROP INDEX "public"."chain_deposits_unfinalized_idx"`);
    await queryRunner.query(`ALTER TABLE "chain_deposits" DROP COLUMN "finalized_at"`);
    await queryRunner.query(`ALTER TABLE "chain_deposits" DROP COLUMN "block_hash"`);
    await queryRunner.query(`ALTER TABLE "chain_deposits" DROP CONSTRAINT "chain_deposits_status_check"`);
    // The old statuses have no reorged: one that had credited stays credited, the others not credited.
    await queryRunner.query(`
            UPDATE "chain_deposits" SET "status" = CASE WHEN "order_id" IS NULL THEN 'below_minimum' ELSE 'credited' END
            WHERE "status" = 'reorged'
        `);
    await queryRunner.query(`
            ALTER TABLE "chain_deposits"
            ADD CONSTRAINT "chain_deposits_status_check" CHECK ("status" IN ('credited', 'below_minimum'))
        `);
  }
}
